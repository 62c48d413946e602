import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { feedOptionsKey, feedOptionsSchema } from '../../src/feeds/feed-options.js';
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
  it('accept a day range of 1–366 and merge, and nothing else', () => {
    expect(feedOptionsSchema.parse({})).toEqual({});
    expect(feedOptionsSchema.parse({ days: 28, merge: true })).toEqual({ days: 28, merge: true });
    for (const bad of [
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
    expect(feedOptionsKey({ days: 28, merge: true })).toBe('d28;m1');
    expect(feedOptionsKey({})).toBe('d-;m0');
    expect(feedOptionsKey({ merge: false })).toBe(feedOptionsKey({}));
    expect(feedOptionsKey({ days: 7 })).not.toBe(feedOptionsKey({ days: 8 }));
  });
});
