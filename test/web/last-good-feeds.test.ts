// What the feed route answers with while Postgres cannot answer, decided against a real change listener and
// real notices: how long a served token keeps serving (the grace period counts from when the listener
// stopped hearing), that a revocation heard before an outage answers 404, that a change it could not recheck
// answers 503, and that a read raced by a change is not kept. Postgres stays up here (duringOutage can be
// asked at any time); test/chaos/postgres-outage-feeds.test.ts stops it under the whole web role.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { hashFeedToken } from '../../src/feeds/feed-token.js';
import type { RenderedFeed } from '../../src/serving/render-cache.js';
import { createFeedStore, feedOwnerId } from '../../src/store/feeds.js';
import { startFeedChangeListener, type FeedChangeListener } from '../../src/store/feed-change-listener.js';
import { createPrismaClient } from '../../src/store/prisma-client.js';
import {
  createLastGoodFeeds,
  type LastGoodFeeds,
  type LastGoodFeedsOptions,
  type RecheckResult,
} from '../../src/serving/last-good-feeds.js';
import { freePort } from '../chaos/chaos-support.js';
import { FakeClock } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';

const GRACE_SECONDS = 3600;
let h: WebHarness;
let connectionId: string;
let listener: FeedChangeListener | undefined;
let clock: FakeClock;

/** A statement on a connection of its own, as another process would run it. */
const otherWriter = (sql: string, values: unknown[] = []) => h.sync.db.sql.query(sql, values);
const rename = (id: string, name: string) =>
  otherWriter(`UPDATE connection SET display_name = $2 WHERE id = $1`, [id, name]);

const keyOf = (token: string) => hashFeedToken(token).toString('base64');

function renderedText(text: string): RenderedFeed {
  const body = Buffer.from(text, 'utf8');
  const lastModified = new Date('2026-03-02T08:00:00Z');
  return {
    body,
    gzipped: undefined,
    tag: text,
    lastModified,
    lastModifiedHttpDate: lastModified.toUTCString(),
  };
}

beforeAll(async () => {
  h = await createWebHarness('web_last_good');
  connectionId = (await h.connectViaWeb(h.sync.sim.users[0]!.email)).connectionId;
});
afterAll(async () => {
  await h?.close();
});
afterEach(async () => {
  await listener?.close();
  listener = undefined;
});

async function start(
  options: Partial<LastGoodFeedsOptions> = {},
): Promise<{ lastGood: LastGoodFeeds; rechecks: RecheckResult[] }> {
  clock = new FakeClock(new Date('2026-03-02T09:00:00Z'));
  // A reconnect that never comes during a test: what is measured is the time without the listener.
  listener = await startFeedChangeListener({
    sessions: h.sync.clients.pgSessions,
    logger: h.deps.logger,
    reconnectMinMs: 600_000,
  });
  const rechecks: RecheckResult[] = [];
  const lastGood = createLastGoodFeeds({
    load: (hash) => h.feeds.resolveTokenHash(hash),
    changes: listener,
    graceSeconds: GRACE_SECONDS,
    now: clock.now,
    onRecheck: (result) => rechecks.push(result),
    ...options,
  });
  return { lastGood, rechecks };
}

/** A new feed, read from the database and kept as the route keeps a feed it served. */
async function servedFeed(lastGood: LastGoodFeeds, ofConnection = connectionId) {
  const { token, feed } = await h.feeds.create({ connectionId: ofConnection });
  const since = lastGood.mark();
  const resolved = await h.feeds.resolveTokenHash(hashFeedToken(token));
  lastGood.keep(since, keyOf(token), feedOwnerId(resolved!.feed), renderedText(token));
  return { key: keyOf(token), token, feedId: feed.id };
}

/** Ends the listener's connection from the server side, as a Postgres shutdown does. */
async function stopHearing(): Promise<void> {
  const current = listener!;
  await otherWriter(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
     WHERE application_name = 'slotfeed-listen' AND datname = current_database()`,
  );
  await waitFor(
    async () => current.isLive(),
    (live) => !live,
    { what: 'the listener to notice' },
  );
}

describe('how long a served feed keeps serving without the database', () => {
  it('serves the bytes last served, and stays confirmed for as long as the listener hears', async () => {
    const { lastGood } = await start();
    const { key, token } = await servedFeed(lastGood);
    clock.advance(10 * GRACE_SECONDS);
    const answer = lastGood.duringOutage(key);
    expect(answer.kind).toBe('last_good');
    expect(answer.kind === 'last_good' && answer.rendered.body.toString()).toBe(token);
  });

  it('counts the grace period from when the listener stopped hearing', async () => {
    const { lastGood } = await start();
    const { key } = await servedFeed(lastGood);
    clock.advance(600);
    await stopHearing();
    clock.advance(GRACE_SECONDS - 1);
    expect(lastGood.duringOutage(key).kind).toBe('last_good');
    clock.advance(1);
    expect(lastGood.duringOutage(key).kind).toBe('unavailable');
  });

  it('counts it from the read itself when the token was read while the listener did not hear', async () => {
    const { lastGood } = await start();
    await stopHearing();
    const { key } = await servedFeed(lastGood);
    clock.advance(GRACE_SECONDS - 1);
    expect(lastGood.duringOutage(key).kind).toBe('last_good');
    clock.advance(1);
    expect(lastGood.duringOutage(key).kind).toBe('unavailable');
  });

  it('never serves from memory with a grace period of 0', async () => {
    const { lastGood } = await start({ graceSeconds: 0 });
    const { key } = await servedFeed(lastGood);
    expect(lastGood.duringOutage(key).kind).toBe('unavailable');
  });

  it('answers unavailable for a token it never served', async () => {
    const { lastGood } = await start();
    const { token } = await h.feeds.create({ connectionId });
    expect(lastGood.duringOutage(keyOf(token)).kind).toBe('unavailable');
  });
});

describe('revocations and other changes heard before an outage', () => {
  it('a revocation, rechecked after its notice, answers gone', async () => {
    const { lastGood, rechecks } = await start();
    const { key, feedId } = await servedFeed(lastGood);
    await otherWriter(`UPDATE feed SET revoked_at = now() WHERE id = $1`, [feedId]);
    await listener!.caughtUp();
    await lastGood.settled();
    expect(lastGood.duringOutage(key).kind).toBe('gone');
    expect(rechecks).toContain('gone');
    // A tombstone outlives the listener: the URL stays dead through an outage.
    await stopHearing();
    clock.advance(10 * GRACE_SECONDS);
    expect(lastGood.duringOutage(key).kind).toBe('gone');
  });

  it('a rotation: the old token answers gone', async () => {
    const { lastGood } = await start();
    const { key, feedId } = await servedFeed(lastGood);
    await h.feeds.rotate(feedId);
    await listener!.caughtUp();
    await lastGood.settled();
    expect(lastGood.duringOutage(key).kind).toBe('gone');
  });

  it('a change that revoked nothing is rechecked and the feed keeps serving', async () => {
    const { lastGood, rechecks } = await start();
    const { key } = await servedFeed(lastGood);
    await rename(connectionId, 'Renamed While Heard');
    await listener!.caughtUp();
    await lastGood.settled();
    expect(rechecks).toContain('confirmed');
    expect(lastGood.duringOutage(key).kind).toBe('last_good');
  });

  it('a change it could not recheck leaves the token in doubt: 503, not the old bytes', async () => {
    // The recheck's query goes to a port where no Postgres listens: a real "cannot reach" error.
    const nowhere = createPrismaClient(`postgresql://postgres@127.0.0.1:${await freePort()}/nowhere`);
    try {
      const unreachable = createFeedStore(nowhere);
      const { lastGood, rechecks } = await start({ load: (hash) => unreachable.resolveTokenHash(hash) });
      const { key } = await servedFeed(lastGood);
      await rename(connectionId, 'Renamed Unchecked');
      await listener!.caughtUp();
      await lastGood.settled();
      expect(rechecks).toEqual(['failed']);
      expect(lastGood.duringOutage(key).kind).toBe('unavailable');
    } finally {
      await nowhere.$disconnect();
    }
  });

  it('a TRUNCATE puts every token in doubt', async () => {
    const { lastGood } = await start();
    const { key } = await servedFeed(lastGood);
    // A TRUNCATE of the real table would end the other tests; the trigger is what sends the notice, so it is
    // attached to a scratch table of the same shape.
    await otherWriter(`CREATE TABLE IF NOT EXISTS truncate_probe (LIKE feed)`);
    await otherWriter(
      `CREATE OR REPLACE TRIGGER probe_truncate AFTER TRUNCATE ON truncate_probe
       FOR EACH STATEMENT EXECUTE FUNCTION slotfeed_notify_feed_change()`,
    );
    await otherWriter(`TRUNCATE truncate_probe`);
    await listener!.caughtUp();
    expect(lastGood.duringOutage(key).kind).toBe('unavailable');
  });
});

describe('what is kept', () => {
  it('not a read that a change to its connection raced', async () => {
    const { lastGood } = await start();
    const { token } = await h.feeds.create({ connectionId });
    const since = lastGood.mark();
    const resolved = await h.feeds.resolveTokenHash(hashFeedToken(token));
    await rename(connectionId, 'Raced');
    await listener!.caughtUp();
    lastGood.keep(since, keyOf(token), feedOwnerId(resolved!.feed), renderedText(token));
    expect(lastGood.duringOutage(keyOf(token)).kind).toBe('unavailable');
  });

  it('a read that only another connection’s change raced', async () => {
    const { lastGood } = await start();
    const other = await h.sync.clients.prisma.connection.create({
      data: { upstreamUserId: 'usr_last_good_other', email: 'other@example.test', timezone: 'UTC' },
    });
    const { token } = await h.feeds.create({ connectionId });
    const since = lastGood.mark();
    const resolved = await h.feeds.resolveTokenHash(hashFeedToken(token));
    await rename(other.id, 'Someone Else');
    await listener!.caughtUp();
    lastGood.keep(since, keyOf(token), feedOwnerId(resolved!.feed), renderedText(token));
    expect(lastGood.duringOutage(keyOf(token)).kind).toBe('last_good');
  });

  it('tombstones only for tokens it served: unknown tokens do not fill memory', async () => {
    const { lastGood } = await start();
    const guess = keyOf('a-guessed-token');
    lastGood.markGone(guess);
    expect(lastGood.duringOutage(guess).kind).toBe('unavailable');
    const { key } = await servedFeed(lastGood);
    lastGood.markGone(key);
    expect(lastGood.duringOutage(key).kind).toBe('gone');
  });

  it('at most maxBytes of bytes, least recently served first out', async () => {
    // Each entry counts its body plus 256 bytes of bookkeeping: room for two of these, not three.
    const { lastGood } = await start({ maxBytes: 2 * (43 + 256) + 100 });
    const first = await servedFeed(lastGood);
    const second = await servedFeed(lastGood);
    const third = await servedFeed(lastGood);
    expect(lastGood.duringOutage(first.key).kind).toBe('unavailable');
    expect(lastGood.duringOutage(second.key).kind).toBe('last_good');
    expect(lastGood.duringOutage(third.key).kind).toBe('last_good');
  });
});
