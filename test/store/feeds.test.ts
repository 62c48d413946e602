import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { hashFeedToken, newFeedToken } from '../../src/feeds/feed-token.js';
import { ConnectionNotFoundError } from '../../src/store/connections.js';
import {
  createFeedStore,
  FeedNotFoundError,
  InvalidFeedOptionsError,
  type FeedStore,
  type FeedStoreLogger,
} from '../../src/store/feeds.js';
import { createTokenVault, TokenVaultError, vaultKeyFromBase64 } from '../../src/store/token-vault.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

const NOW = new Date('2026-03-02T09:00:00Z');

let db: TestDatabase;
let feeds: FeedStore;
const warnings: { details: Record<string, unknown>; message: string }[] = [];
const logger: FeedStoreLogger = { warn: (details, message) => warnings.push({ details, message }) };

async function newConnection(): Promise<string> {
  const id = randomUUID();
  await db.prisma.connection.create({ data: { id, upstreamUserId: `user-${id}`, displayName: 'Ada' } });
  return id;
}

beforeAll(async () => {
  db = await createTestDatabase('feed_store');
  feeds = createFeedStore(db.prisma, logger);
});
afterAll(async () => {
  await db?.drop();
});

describe('creating feeds', () => {
  it('returns the token once and stores only its SHA-256', async () => {
    const connectionId = await newConnection();
    const { feed, token } = await feeds.create({
      connectionId,
      upstreamEventId: 'ev-1',
      label: ' Website ',
      options: { view: 'slots', days: 14, merge: true },
    });
    expect(feed).toEqual({
      id: expect.any(String),
      connectionId,
      teamId: null,
      upstreamEventId: 'ev-1',
      label: 'Website',
      options: { view: 'slots', days: 14, merge: true },
      createdAt: expect.any(Date),
      inputsChangedAt: null,
      labelChangedAt: null,
      revokedAt: null,
      // This store has no vault: the token is kept as its hash only.
      tokenRecoverable: false,
    });

    const rows = await db.sql.query<{ token_hash: Buffer; row: string }>(
      'SELECT token_hash, row_to_json(feed)::text AS row FROM feed WHERE id = $1',
      [feed.id],
    );
    const [row] = rows.rows;
    expect(row?.token_hash.equals(hashFeedToken(token))).toBe(true);
    // Nowhere in the row, in any encoding a careless column could hold.
    const hex = Buffer.from(token).toString('hex');
    expect(row?.row).not.toContain(token);
    expect(row?.row).not.toContain(hex);
  });

  it('with a vault, keeps the token sealed for its owner: revealed again, never in the clear, bound to its feed', async () => {
    const vault = createTokenVault(vaultKeyFromBase64(randomBytes(32).toString('base64')));
    const sealing = createFeedStore(db.prisma, logger, vault);
    const connectionId = await newConnection();
    const { feed, token } = await sealing.create({ connectionId });
    expect(feed.tokenRecoverable).toBe(true);
    expect(await sealing.revealToken(feed.id)).toBe(token);
    const { rows } = await db.sql.query<{ row: string; token_sealed: string }>(
      'SELECT row_to_json(feed)::text AS row, token_sealed FROM feed WHERE id = $1',
      [feed.id],
    );
    expect(rows[0]!.row).not.toContain(token);
    // Rotating seals the new token; the old sealed copy, moved onto another feed, does not open there.
    const rotated = await sealing.rotate(feed.id);
    expect(await sealing.revealToken(feed.id)).toBe(rotated.token);
    const other = await sealing.create({ connectionId });
    await db.sql.query('UPDATE feed SET token_sealed = $1 WHERE id = $2', [
      rows[0]!.token_sealed,
      other.feed.id,
    ]);
    await expect(sealing.revealToken(other.feed.id)).rejects.toThrow(TokenVaultError);
    // A revoked feed's URL is not shown again.
    await sealing.revoke(feed.id, NOW);
    expect(await sealing.revealToken(feed.id)).toBeNull();
  });

  it('rejects invalid options and unknown connections', async () => {
    const connectionId = await newConnection();
    await expect(feeds.create({ connectionId, options: { days: 0 } })).rejects.toThrow(
      InvalidFeedOptionsError,
    );
    await expect(
      feeds.create({ connectionId, options: { merge: true, zone: 'UTC' } as unknown as { merge: boolean } }),
    ).rejects.toThrow(/invalid feed options/);
    await expect(feeds.create({ connectionId: randomUUID() })).rejects.toThrow(ConnectionNotFoundError);
    await expect(feeds.create({ connectionId: 'not-a-uuid' })).rejects.toThrow(ConnectionNotFoundError);
    // Options of the other view: merge means nothing to free time, a block title nothing to slots.
    await expect(feeds.create({ connectionId, options: { merge: true } })).rejects.toThrow(/slots view only/);
    await expect(feeds.create({ connectionId, options: { view: 'slots', summary: 'Free' } })).rejects.toThrow(
      /views of free time only/,
    );
  });
});

describe('finding a feed by token', () => {
  it('finds the active feed, and nothing for unknown, malformed, rotated-away or revoked tokens', async () => {
    const connectionId = await newConnection();
    const { feed, token } = await feeds.create({ connectionId });
    expect((await feeds.findByToken(token))?.id).toBe(feed.id);

    expect(await feeds.findByToken(newFeedToken())).toBeUndefined();
    for (const malformed of ['', 'x', `${token}.ics`, token.slice(1), 'ä'.repeat(43), "' OR 1=1 --"]) {
      expect(await feeds.findByToken(malformed)).toBeUndefined();
    }

    const rotated = await feeds.rotate(feed.id);
    expect(rotated.token).not.toBe(token);
    expect(rotated.feed.id).toBe(feed.id);
    expect(await feeds.findByToken(token)).toBeUndefined();
    expect((await feeds.findByToken(rotated.token))?.id).toBe(feed.id);

    await feeds.revoke(feed.id, NOW);
    expect(await feeds.findByToken(rotated.token)).toBeUndefined();
    expect((await feeds.get(feed.id)).revokedAt).toEqual(NOW);
  });
});

describe('rotate, revoke and get', () => {
  it('keeps the first revocation time and refuses to rotate a revoked feed', async () => {
    const { feed } = await feeds.create({ connectionId: await newConnection() });
    await feeds.revoke(feed.id, NOW);
    await feeds.revoke(feed.id, new Date('2026-03-05T00:00:00Z'));
    expect((await feeds.get(feed.id)).revokedAt).toEqual(NOW);
    await expect(feeds.rotate(feed.id)).rejects.toThrow(/is revoked/);
    await expect(feeds.rotate(feed.id)).rejects.toThrow(FeedNotFoundError);
  });

  it('throws FeedNotFoundError for unknown and malformed ids', async () => {
    for (const id of [randomUUID(), 'nope']) {
      await expect(feeds.get(id)).rejects.toThrow(FeedNotFoundError);
      await expect(feeds.rotate(id)).rejects.toThrow(FeedNotFoundError);
      await expect(feeds.revoke(id, NOW)).rejects.toThrow(FeedNotFoundError);
    }
  });
});

describe('listing', () => {
  it('lists active feeds of a connection oldest first, revoked ones only when asked', async () => {
    const connectionId = await newConnection();
    const b = await feeds.create({ connectionId, label: 'b' });
    const a = await feeds.create({ connectionId, label: 'a' });
    // Creation times a minute apart, and not in insertion order: the order must come from created_at.
    await db.sql.query(`UPDATE feed SET created_at = $2 WHERE id = $1`, [a.feed.id, NOW]);
    await db.sql.query(`UPDATE feed SET created_at = $2 WHERE id = $1`, [
      b.feed.id,
      new Date(NOW.getTime() + 60_000),
    ]);
    await feeds.create({ connectionId: await newConnection(), label: 'elsewhere' });
    await feeds.revoke(a.feed.id, NOW);

    expect((await feeds.list({ connectionId })).map((f) => f.label)).toEqual(['b']);
    expect((await feeds.list({ connectionId, includeRevoked: true })).map((f) => f.label)).toEqual([
      'a',
      'b',
    ]);
    expect((await feeds.list()).map((f) => f.id)).toContain(b.feed.id);
    expect((await feeds.list()).map((f) => f.id)).not.toContain(a.feed.id);
    expect(await feeds.list({ connectionId: 'not-a-uuid' })).toEqual([]);
  });
});

describe('ensureDefaultFeed', () => {
  it('creates the default feed once, returning its token only then', async () => {
    const connectionId = await newConnection();
    // Feeds that are not the default: one event type, or non-default options.
    await feeds.create({ connectionId, upstreamEventId: 'ev-1' });
    await feeds.create({ connectionId, options: { view: 'slots' } });
    await feeds.create({ connectionId, options: { summary: 'Open for calls' } });

    const first = await feeds.ensureDefaultFeed(connectionId);
    expect(first.token).not.toBeNull();
    expect(first.feed).toMatchObject({ connectionId, upstreamEventId: null, options: { view: 'free' } });

    const second = await feeds.ensureDefaultFeed(connectionId);
    expect(second).toEqual({ feed: first.feed, token: null });
    expect((await feeds.findByToken(first.token ?? ''))?.id).toBe(first.feed.id);
  });

  it('creates one feed when called concurrently', async () => {
    const connectionId = await newConnection();
    const results = await Promise.all(Array.from({ length: 5 }, () => feeds.ensureDefaultFeed(connectionId)));
    expect(new Set(results.map((r) => r.feed.id)).size).toBe(1);
    expect(results.filter((r) => r.token !== null)).toHaveLength(1);
    expect(await feeds.list({ connectionId })).toHaveLength(1);
  });

  it('creates a new default feed after the old one was revoked', async () => {
    const connectionId = await newConnection();
    const old = await feeds.ensureDefaultFeed(connectionId);
    await feeds.revoke(old.feed.id, NOW);
    const fresh = await feeds.ensureDefaultFeed(connectionId);
    expect(fresh.feed.id).not.toBe(old.feed.id);
    expect(fresh.token).not.toBeNull();
  });

  it('throws ConnectionNotFoundError for an unknown connection', async () => {
    await expect(feeds.ensureDefaultFeed(randomUUID())).rejects.toThrow(ConnectionNotFoundError);
  });
});

describe('stored options that no longer validate', () => {
  it('serve the feed with default options and log a warning', async () => {
    const { feed, token } = await feeds.create({ connectionId: await newConnection(), options: { days: 7 } });
    await db.sql.query(`UPDATE feed SET options = '{"days": 9999, "colour": "red"}' WHERE id = $1`, [
      feed.id,
    ]);
    warnings.length = 0;

    const found = await feeds.findByToken(token);

    expect(found?.options).toEqual({ view: 'free' });
    expect(warnings).toEqual([
      {
        details: { feedId: feed.id, issues: expect.arrayContaining([expect.any(String)]) },
        message: 'stored feed options are invalid; serving the feed with default options',
      },
    ]);
  });
});
