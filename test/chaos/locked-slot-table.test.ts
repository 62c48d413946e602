// A lock held on `slot` (LOCK TABLE … ACCESS EXCLUSIVE, as a migration or an operator's script would take it)
// while calendar apps fetch feeds nobody has fetched before. Before the pools had timeouts, 11 of 14 such
// requests answered 500 after 59 s and /readyz and the admin page hung. Now every cold feed answers 503 with
// Retry-After within the lock timeout (plus as long again waiting for a pooled connection), /healthz and
// /readyz answer while the feeds still wait, and a sync commit behind the lock gives up after its own
// (longer) lock timeout instead of holding a worker; once the lock is gone everything works again.
// The lock is taken in this file's own database (test/support/db), so no other test is held up.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { ADMIN_TOKEN, createWebHarness, type RawResponse, type WebHarness } from '../support/web-harness.js';
import { patient } from '../support/patience.js';

const LOCK_TIMEOUT_MS = 500;
const SYNC_LOCK_TIMEOUT_MS = 800;
const COLD_FEEDS = 14;

let h: WebHarness;
let connectionId: string;
const tokens: string[] = [];

beforeAll(async () => {
  h = await createWebHarness('chaos_locked', {
    env: {
      DATABASE_LOCK_TIMEOUT_MS: String(LOCK_TIMEOUT_MS),
      DATABASE_STATEMENT_TIMEOUT_MS: '5000',
      SYNC_LOCK_TIMEOUT_MS: String(SYNC_LOCK_TIMEOUT_MS),
    },
  });
  ({ connectionId } = await h.connectViaWeb(h.sync.sim.users[0]!.email));
  await h.syncNow(connectionId);
  for (let i = 0; i < COLD_FEEDS; i++) {
    const { token } = await h.feeds.create({ connectionId, options: { view: 'free', days: 7 + i } });
    tokens.push(token);
  }
});
afterAll(async () => {
  await h?.close();
});

interface Timed {
  response: RawResponse;
  ms: number;
  /** Order in which the answers arrived. */
  seq: number;
}

let arrivals = 0;
async function timed(request: Promise<RawResponse>, started: number): Promise<Timed> {
  const response = await request;
  return { response, ms: Date.now() - started, seq: arrivals++ };
}

async function holdingSlotLock<T>(work: () => Promise<T>): Promise<T> {
  const locker: pg.PoolClient = await h.sync.db.sql.connect();
  try {
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE slot IN ACCESS EXCLUSIVE MODE');
    return await work();
  } finally {
    await locker.query('ROLLBACK').catch(() => undefined);
    locker.release();
  }
}

describe('a lock held on slot', () => {
  it('gives each pool the timeouts configured for it', async () => {
    const show = async (prisma: typeof h.sync.clients.prisma) => {
      const [row] = await prisma.$queryRaw<{ statement_timeout: string; lock_timeout: string }[]>`
        SELECT current_setting('statement_timeout') AS statement_timeout,
               current_setting('lock_timeout') AS lock_timeout`;
      return row;
    };
    // The web role's pool (composeWebDeps builds its stores over it) and the sync worker's.
    expect(await show(h.sync.clients.prisma)).toEqual({ statement_timeout: '5s', lock_timeout: '500ms' });
    expect(await show(h.sync.clients.syncPrisma)).toEqual({
      statement_timeout: '2min',
      lock_timeout: '800ms',
    });
  });

  it('cold feeds answer 503 with Retry-After within the timeouts; /healthz, /readyz and admin answer', async () => {
    const results = await holdingSlotLock(async () => {
      arrivals = 0;
      const started = Date.now();
      const feeds = tokens.map((token) => timed(h.get(`/feeds/${token}.ics`), started));
      const healthz = timed(h.get('/healthz'), started);
      const readyz = timed(h.get('/readyz/web'), started);
      const admin = timed(
        h.get('/admin', { authorization: `Bearer ${ADMIN_TOKEN}`, accept: 'application/json' }),
        started,
      );
      return {
        feeds: await Promise.all(feeds),
        healthz: await healthz,
        readyz: await readyz,
        admin: await admin,
      };
    });

    for (const feed of results.feeds) {
      expect(feed.response.status).toBe(503);
      expect(Number(feed.response.headers['retry-after'])).toBeGreaterThan(0);
      // Waiting for one of the pool's ten connections (at most the lock timeout), then for the lock; the rest is
      // the machine's own time, which a loaded one stretches (2.8 s beside stress-ng at a load of 15).
      expect(feed.ms).toBeLessThan(2 * LOCK_TIMEOUT_MS + patient(1500));
    }
    const firstFeed = Math.min(...results.feeds.map((f) => f.seq));
    expect(results.healthz.response.status).toBe(200);
    expect(results.healthz.seq).toBeLessThan(firstFeed);
    // Readiness asks Postgres over its own connection: Postgres answers, whatever the pool is waiting on.
    expect(results.readyz.response.status).toBe(200);
    expect(JSON.parse(results.readyz.response.text)).toMatchObject({ postgres: 'ok', redis: 'ok' });
    expect(results.readyz.seq).toBeLessThan(firstFeed);
    // The admin page counts open slots: it waits for the lock no longer than a feed does.
    expect(results.admin.response.status).toBe(503);
    expect(results.admin.ms).toBeLessThan(2 * LOCK_TIMEOUT_MS + 1500);
  });

  it('a sync commit behind the lock gives up after the worker pool’s lock timeout, and commits once it is gone', async () => {
    const before = await h.sync.db.prisma.syncRun.count({ where: { connectionId, outcome: 'succeeded' } });
    const outcome = await holdingSlotLock(async () => {
      const started = Date.now();
      const failed = await h.syncNow(connectionId).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      return { failed, ms: Date.now() - started };
    });
    expect(outcome.failed).toBeDefined();
    expect(outcome.ms).toBeLessThan(SYNC_LOCK_TIMEOUT_MS + 3000);
    await h.syncNow(connectionId);
    expect(await h.sync.db.prisma.syncRun.count({ where: { connectionId, outcome: 'succeeded' } })).toBe(
      before + 1,
    );
  });

  it('serves every feed again once the lock is gone', async () => {
    for (const token of tokens) expect((await h.get(`/feeds/${token}.ics`)).status).toBe(200);
  });
});
