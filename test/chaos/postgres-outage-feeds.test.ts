// Fault: Postgres stopped under the web role (a fast shutdown of a cluster of the test's own), then started
// again. Through the stop, every feed this process served answers with the bytes and validators it last
// served (so a conditional poll still gets its 304), a feed it never served answers 503 with Retry-After, a
// URL revoked before the stop answers 404, and the log gets one warning, not a line per poll. The grace
// period is checked on the injected clock; after the restart, feeds come from the database again.
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { OUTAGE_SETTLE_MS } from '../../src/web/feeds/database-outage.js';
import { DATABASE_RETRY_AFTER_SECONDS } from '../../src/web/error-handler.js';
import { FEEDS_UNAVAILABLE } from '../../src/web/feeds/feed-routes.js';
import type { FakeClock } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { createWebHarness, type RawResponse, type WebHarness } from '../support/web-harness.js';
import { startOwnPostgres, type OwnPostgres } from './chaos-support.js';
import { patient } from '../support/patience.js';

const GRACE_SECONDS = 3600;
/** Polls answered while Postgres is down: enough to cover several of the listener's reconnect attempts. */
const OUTAGE_POLLS = 600;
/** The listener's reconnect attempts that must have failed before the outage polls may stop. */
const RECONNECT_ATTEMPTS = 4;

interface Served {
  path: string;
  identity: RawResponse;
  gzipped: RawResponse;
}

let postgres: OwnPostgres;
let h: WebHarness;
const lines: string[] = [];
/** Warm: served before the stop. */
const warm: Served[] = [];
/** Cold: active feeds this process never served. */
const cold: string[] = [];
let revokedAfterPoll: string;
let revokedUnpolled: string;
const connectionIds: string[] = [];

const feedPath = (token: string) => `/feeds/${token}.ics`;
const parsed = (from: number, to = lines.length) =>
  lines
    .slice(from, to)
    .map((line) => JSON.parse(line) as { level: number; msg: string } & Record<string, unknown>);

function counterValue(name: string, labels: Record<string, string>): Promise<number> {
  return h.metrics.registry
    .getSingleMetric(name)!
    .get()
    .then(
      (m) => m.values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value ?? 0,
    );
}

function expectUnavailable(response: RawResponse) {
  expect(response.status).toBe(503);
  expect(response.headers['retry-after']).toBe(String(DATABASE_RETRY_AFTER_SECONDS));
  expect(JSON.parse(response.text)).toEqual({ error: 'unavailable', message: FEEDS_UNAVAILABLE });
}

async function serve(token: string): Promise<Served> {
  const path = feedPath(token);
  const identity = await h.get(path);
  const gzipped = await h.get(path, { 'accept-encoding': 'gzip' });
  expect(identity.status).toBe(200);
  expect(gzipped.headers['content-encoding']).toBe('gzip');
  return { path, identity, gzipped };
}

beforeAll(async () => {
  postgres = await startOwnPostgres();
  h = await createWebHarness('chaos_pg_outage', {
    databaseAdminUrl: postgres.adminUrl,
    simulator: { users: 3 },
    // Every poll comes from one address: the per-client feed rate limit is not what is under test.
    webEnv: { FEED_OUTAGE_GRACE_SECONDS: String(GRACE_SECONDS), FEED_RATE_LIMIT_PER_MINUTE: '0' },
    logLines: lines,
    // Debug, to see the listener's reconnect attempts (and that none of them is a warning).
    logLevel: 'debug',
  });
  const tokens: string[] = [];
  for (const user of h.sync.sim.users) {
    const connected = await h.connectViaWeb(user.email);
    await h.syncNow(connected.connectionId);
    connectionIds.push(connected.connectionId);
    tokens.push(connected.token!);
  }
  const [first, second, third] = connectionIds as [string, string, string];
  // Revoked before the stop, first: a revocation's notice puts every feed of its connection in doubt until a
  // recheck clears it, so the feeds served below must be served after it. One feed is never polled again: the
  // web role learns of its revocation only from the notice and the recheck that follows it…
  const unpolled = await h.feeds.create({ connectionId: third });
  await serve(unpolled.token);
  await h.feeds.revoke(unpolled.feed.id, h.sync.clock.now());
  await h.deps.feedChanges.caughtUp();
  await waitFor(
    () => counterValue('slotfeed_feed_last_good_rechecks_total', { result: 'gone' }),
    (value) => value === 1,
    { what: 'the recheck that finds the revoked feed gone' },
  );
  revokedUnpolled = feedPath(unpolled.token);
  // … the other is polled after its revocation (the database answers 404).
  const polled = await h.feeds.create({ connectionId: second });
  await serve(polled.token);
  await h.feeds.revoke(polled.feed.id, h.sync.clock.now());
  expect((await h.get(feedPath(polled.token))).status).toBe(404);
  revokedAfterPoll = feedPath(polled.token);

  tokens.push((await h.feeds.create({ connectionId: first, options: { view: 'slots' } })).token);
  for (const token of tokens) warm.push(await serve(token));
  // Created (an INSERT sends no notice), never served.
  for (const connectionId of [first, second])
    cold.push(feedPath((await h.feeds.create({ connectionId })).token));
}, patient(120_000));

afterAll(async () => {
  try {
    // The harness drops its database on the cluster, which must be up for that.
    if (postgres && !postgres.isRunning()) await postgres.restart();
    await h?.close();
  } finally {
    await postgres?.remove();
  }
});

describe('Postgres stopped under the web role', () => {
  let outageFrom: number;
  let outageTo: number;
  let servedFromMemory = 0;

  it(
    'serves every feed it served from memory, with its validators; others 503; revoked ones 404',
    async () => {
      expect(h.deps.feedChanges.isLive()).toBe(true);
      outageFrom = lines.length;
      const stoppedAt = performance.now();
      await postgres.stop();
      await waitFor(
        async () => h.deps.feedChanges.isLive(),
        (live) => !live,
        { what: 'the listener to notice the stop' },
      );

      const statuses = new Map<number, number>();
      const latencies: number[] = [];
      let polls = 0;
      let scanned = outageFrom;
      let failedReconnects = 0;
      const reconnectAttempts = () => {
        for (; scanned < lines.length; scanned += 1) {
          if (lines[scanned]!.includes('feed change listener could not reconnect')) failedReconnects += 1;
        }
        return failedReconnects;
      };
      // "Through the stop": polls keep coming while the listener fails to reconnect again and again.
      while (polls < OUTAGE_POLLS || reconnectAttempts() < RECONNECT_ATTEMPTS) {
        const served = warm[polls % warm.length]!;
        const started = performance.now();
        // In turn: a plain poll, a revalidation by ETag, one by date, a gzip poll, a HEAD.
        switch (polls % 5) {
          case 0: {
            const response = await h.get(served.path);
            expect(response.status).toBe(200);
            expect(response.body.equals(served.identity.body)).toBe(true);
            expect(response.headers.etag).toBe(served.identity.headers.etag);
            expect(response.headers['last-modified']).toBe(served.identity.headers['last-modified']);
            expect(response.headers['content-type']).toBe('text/calendar; charset=utf-8');
            break;
          }
          case 1: {
            const response = await h.get(served.path, { 'if-none-match': served.identity.headers.etag! });
            expect(response.status).toBe(304);
            expect(response.headers.etag).toBe(served.identity.headers.etag);
            break;
          }
          case 2: {
            const response = await h.get(served.path, {
              'if-modified-since': served.identity.headers['last-modified']!,
            });
            expect(response.status).toBe(304);
            break;
          }
          case 3: {
            const response = await h.get(served.path, { 'accept-encoding': 'gzip' });
            expect(response.status).toBe(200);
            expect(response.headers.etag).toBe(served.gzipped.headers.etag);
            expect(gunzipSync(response.body).equals(served.identity.body)).toBe(true);
            break;
          }
          default: {
            const response = await h.request('HEAD', served.path);
            expect(response.status).toBe(200);
            expect(response.headers.etag).toBe(served.identity.headers.etag);
          }
        }
        latencies.push(performance.now() - started);
        const status = polls % 5 === 1 || polls % 5 === 2 ? 304 : 200;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        polls += 1;
      }
      servedFromMemory += polls;

      for (const path of cold) expectUnavailable(await h.get(path));
      // A token never seen looks the same as a cold one: nothing tells them apart.
      expectUnavailable(await h.get(feedPath('x'.repeat(43))));
      expect((await h.get(revokedAfterPoll)).status).toBe(404);
      expect((await h.get(revokedUnpolled)).status).toBe(404);

      latencies.sort((a, b) => a - b);
      const seconds = (performance.now() - stoppedAt) / 1000;
      process.stderr.write(
        `postgres-outage-feeds: ${polls} warm polls (${statuses.get(200)} × 200, ${statuses.get(304)} × 304) ` +
          `over ${seconds.toFixed(1)} s stopped, ${reconnectAttempts()} failed listener reconnects; ` +
          `p50 ${latencies[Math.floor(polls / 2)]!.toFixed(1)} ms, max ${latencies.at(-1)!.toFixed(1)} ms\n`,
      );
      expect(await counterValue('slotfeed_feed_outage_answers_total', { answer: 'last_good' })).toBe(polls);
      expect(await counterValue('slotfeed_feed_outage_answers_total', { answer: 'unavailable' })).toBe(
        cold.length + 1,
      );
    },
    patient(120_000),
  );

  it('keeps serving for the grace period after the token was last confirmed, then answers 503', async () => {
    const clock = h.sync.clock as FakeClock;
    const [served] = warm as [Served];
    clock.advance(GRACE_SECONDS - 1);
    expect((await h.get(served.path)).status).toBe(200);
    servedFromMemory += 1;
    clock.advance(1);
    expectUnavailable(await h.get(served.path));
    expectUnavailable(await h.get(served.path, { 'if-none-match': served.identity.headers.etag! }));
  });

  it('logs one warning for the whole outage, in JSON lines, and no error', () => {
    outageTo = lines.length;
    const during = parsed(outageFrom, outageTo);
    const warnings = during.filter((line) => line.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ reason: 'unreachable', graceSeconds: GRACE_SECONDS });
    expect(during.filter((line) => line.level >= 50)).toEqual([]);
  });

  it(
    'serves from the database again after the restart, and shows a change made after it',
    async () => {
      await postgres.restart();
      for (const served of warm) {
        const response = await h.get(served.path);
        expect(response.status).toBe(200);
        expect(response.headers.etag).toBe(served.identity.headers.etag);
      }
      for (const path of cold) expect((await h.get(path)).status).toBe(200);
      expect((await h.get(revokedUnpolled)).status).toBe(404);

      const [served] = warm as [Served];
      await h.sync.db.sql.query(
        `UPDATE connection SET display_name = 'Back After The Outage' WHERE id = $1`,
        [connectionIds[0]],
      );
      const changed = await h.get(served.path);
      expect(changed.status).toBe(200);
      expect(changed.text).toMatch(/^X-WR-CALNAME:.*Back After The Outage/m);
      expect(changed.headers.etag).not.toBe(served.identity.headers.etag);

      // The end of the outage is logged once polls have been answered normally for a while (injected clock).
      expect(parsed(outageTo).filter((line) => line.msg === 'Postgres answers feed requests again')).toEqual(
        [],
      );
      (h.sync.clock as FakeClock).advance(OUTAGE_SETTLE_MS / 1000);
      expect((await h.get(served.path)).status).toBe(200);
      const after = parsed(outageTo);
      const ended = after.filter((line) => line.msg === 'Postgres answers feed requests again');
      expect(ended).toHaveLength(1);
      expect(ended[0]).toMatchObject({
        level: 30,
        servedFromMemory,
        answeredGone: 2,
        answeredUnavailable: cold.length + 1 + 2,
      });
      expect(after.filter((line) => line.level >= 40)).toEqual([]);
    },
    patient(60_000),
  );
});
