import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import {
  feedOptionsKey,
  feedOptionsSchema,
  normalizeFeedOptions,
  optionsConflict,
} from '../../src/feeds/feed-options.js';
import { hashFeedToken, isWellFormedFeedToken, newFeedToken } from '../../src/feeds/feed-token.js';

describe('feed tokens', () => {
  it('are 43 base64url characters (32 random bytes), different every time', () => {
    const tokens = Array.from({ length: 200 }, () => newFeedToken());
    for (const token of tokens) {
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    }
    expect(new Set(tokens).size).toBe(tokens.length);
  });

  it('hash to the SHA-256 of the token string', () => {
    const token = newFeedToken();
    const hash = hashFeedToken(token);
    expect(hash).toHaveLength(32);
    expect(hash.equals(createHash('sha256').update(token).digest())).toBe(true);
    expect(hashFeedToken(`${token}x`).equals(hash)).toBe(false);
  });

  it('tell well-formed tokens from anything else by shape', () => {
    expect(isWellFormedFeedToken(newFeedToken())).toBe(true);
    for (const bad of [
      '',
      'short',
      `${newFeedToken()}A`,
      `${newFeedToken().slice(0, 42)}=`,
      'a'.repeat(42) + '/',
    ]) {
      expect(isWellFormedFeedToken(bad)).toBe(false);
    }
  });
});

describe('feed options', () => {
  it('accept a view, a day range of 1–366, merge and a summary, and nothing else', () => {
    expect(feedOptionsSchema.parse({})).toEqual({});
    expect(feedOptionsSchema.parse({ days: 28, merge: true })).toEqual({ days: 28, merge: true });
    expect(feedOptionsSchema.parse({ view: 'free', summary: ' Available ' })).toEqual({
      view: 'free',
      summary: 'Available',
    });
    for (const bad of [
      { view: 'tentative' },
      { summary: '' },
      { summary: 'x'.repeat(101) },
      { days: 0 },
      { days: 367 },
      { days: 1.5 },
      { days: '7' },
      { merge: 'yes' },
      { zone: 'UTC' },
    ]) {
      expect(feedOptionsSchema.safeParse(bad).success).toBe(false);
    }
  });

  it('have one canonical cache key per rendering', () => {
    expect(feedOptionsKey({ view: 'slots', days: 28, merge: true })).toBe('slots;d28;m1');
    expect(feedOptionsKey({ view: 'slots', merge: false })).toBe(feedOptionsKey({ view: 'slots' }));
    expect(feedOptionsKey({})).toBe('free;d-;s"Free"');
    expect(feedOptionsKey({ view: 'free', summary: 'Free' })).toBe(feedOptionsKey({}));
    expect(feedOptionsKey({ summary: 'Open' })).not.toBe(feedOptionsKey({}));
    expect(feedOptionsKey({ view: 'slots' })).not.toBe(feedOptionsKey({}));
    expect(feedOptionsKey({ days: 7 })).not.toBe(feedOptionsKey({ days: 8 }));
  });

  it('refuse options of the other view, and normalise to the view and its own options', () => {
    expect(optionsConflict({ merge: true })).toMatch(/slots view only/);
    expect(optionsConflict({ view: 'slots', summary: 'Free' })).toMatch(/views of free time only/);
    expect(optionsConflict({ view: 'slots', merge: true })).toBeUndefined();
    expect(normalizeFeedOptions({})).toEqual({ view: 'free' });
    expect(normalizeFeedOptions({ view: 'slots', merge: false, days: 3 })).toEqual({
      view: 'slots',
      days: 3,
      merge: false,
    });
  });
});
