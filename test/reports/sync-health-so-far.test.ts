// sync-health's day so far (issue 43): the retention run counts what each connection's runs since its stored days
// came to, as of a snapshot, and a report up to now reads that and counts only the runs the snapshot did not see:
// those started since, and those whose sync was still committing. Every sync-health answer stays what counting
// every run gives; packing or pruning the runs it counted makes the connection's day so far counted again.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseReportQuery } from '../../src/reports/report-query.js';
import { compactHistoryBatch } from '../../src/store/history-compaction.js';
import { pruneHistory } from '../../src/store/retention.js';
import { createReportStore } from '../../src/store/reports.js';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { throughStatements } from '../support/raw-statements.js';
import { generateMixedHistory, HISTORY_NOW } from './mixed-history.js';
import { allReportAnswers, differingAnswers } from './report-answers.js';
import { storeOnly } from '../support/store-only.js';

const HOUR_MS = 3_600_000;
const STORE_ONLY = storeOnly();
const pass = (now = HISTORY_NOW) =>
  pruneHistory(db.prisma, STORE_ONLY, { now, pause: async () => undefined });

let db: TestDatabase;
let ids: { connections: string[]; eventId: string };
let berlin: string;

beforeAll(async () => {
  db = await createTestDatabase('sync_health_so_far');
  ids = await generateMixedHistory(db.prisma);
  berlin = ids.connections[0]!;
}, 120_000);

afterAll(async () => {
  await db?.drop();
});

const syncHealthAnswers = async () =>
  new Map([...(await allReportAnswers(db.prisma, ids))].filter(([key]) => key.startsWith('sync-health,')));

/** Berlin's sync-health row as the report store answers it, as of `at`. */
async function berlinHealth(at = HISTORY_NOW) {
  const query = parseReportQuery('sync-health', { connection: berlin }, at);
  const [row] = await createReportStore(db.prisma).syncHealth(query);
  return row!;
}

const daysSoFar = async () =>
  (
    await db.sql.query<{ connection_id: string; attempts: number; stored_through: string | null }>(
      'SELECT connection_id::text, attempts, stored_through::text FROM sync_health_so_far',
    )
  ).rows;
/** Every day so far made not to hold, as packing leaves one: the report counts those days from their runs. */
const forgetAll = () => db.sql.query('UPDATE sync_health_so_far SET stored_through = NULL');

/** A run of Berlin's started at `startedAt`, as a sync records it (a success unless `failed`); on `client` when given. */
const insertRun = (startedAt: Date, client: { query: typeof db.sql.query } = db.sql, failed = false) =>
  client.query(
    `INSERT INTO sync_run (id, connection_id, started_at, finished_at, outcome, error_code, error_message,
                           upstream_calls)
     VALUES (gen_random_uuid(), $1::uuid, $2, $2::timestamptz + interval '2 seconds', $3::sync_outcome,
             CASE WHEN $3 = 'failed' THEN 'upstream_5xx' END, CASE WHEN $3 = 'failed' THEN 'committed late' END, 3)`,
    [berlin, startedAt, failed ? 'failed' : 'succeeded'],
  );

/**
 * db.prisma, with `during` run once on another connection right after the first statement of a transaction that
 * takes the day so far's snapshot (sync-health-so-far.ts), before the rest of it.
 */
function committingDuringTheCount(during: () => Promise<void>): PrismaClient {
  let done = false;
  return throughStatements(db.prisma, async (statement, run) => {
    const rows = await run();
    if (!done && statement.sql?.includes('pg_current_snapshot')) {
      done = true;
      await during();
    }
    return rows;
  });
}

describe('sync-health’s day so far', () => {
  it('answers every sync-health report as counting every run does, with each connection’s day so far read', async () => {
    const computed = await syncHealthAnswers();
    const result = await pass();
    expect(result.daysSoFarCounted).toBe(ids.connections.length);
    // Not vacuous: each connection has runs after its stored days (a run every 20 minutes up to now).
    const counted = await daysSoFar();
    expect(counted.map((row) => row.connection_id).sort()).toEqual([...ids.connections].sort());
    expect(counted.every((row) => row.attempts > 0)).toBe(true);
    expect(differingAnswers(computed, await syncHealthAnswers())).toEqual([]);
  }, 300_000);

  it('adds the runs since the count, their staleness too, as counting every run does', async () => {
    await db.sql.query('DELETE FROM sync_health_so_far');
    const computed = await syncHealthAnswers();
    const countedAt = new Date(HISTORY_NOW.getTime() - 3 * HOUR_MS);
    expect((await pass(countedAt)).daysSoFarCounted).toBe(ids.connections.length);
    // Not vacuous: the runs since the count include successful ones that stored changes, with their staleness.
    const since = await db.sql.query<{ staleness: number }>(
      `SELECT COUNT(*)::int AS staleness FROM sync_run
       WHERE started_at > $1 AND started_at <= $2 AND outcome = 'succeeded' AND change_staleness IS NOT NULL
         AND jsonb_array_length(change_staleness) > 0`,
      [countedAt, HISTORY_NOW],
    );
    expect(since.rows[0]!.staleness).toBeGreaterThan(0);
    expect(differingAnswers(computed, await syncHealthAnswers())).toEqual([]);
  }, 300_000);

  it('reads the runs it counted from the day so far, and counts the runs since', async () => {
    await pass();
    const before = await berlinHealth();
    // Berlin's counted runs of the last three hours turned into failures behind the report's back: read from the
    // day so far, the report does not see it; counting every run again, it would.
    const changed = await db.sql.query(
      `UPDATE sync_run SET outcome = 'failed' WHERE connection_id = $1::uuid AND outcome = 'succeeded'
         AND started_at > $2::timestamptz - interval '3 hours' RETURNING id`,
      [berlin, HISTORY_NOW],
    );
    expect(changed.rowCount).toBeGreaterThan(3);
    try {
      expect(await berlinHealth()).toEqual(before);
      // A run started after the count is counted by a report after it.
      await insertRun(new Date(HISTORY_NOW.getTime() + 10 * 60_000));
      const later = await berlinHealth(new Date(HISTORY_NOW.getTime() + HOUR_MS));
      expect([later.runs, later.succeeded]).toEqual([before.runs + 1, before.succeeded + 1]);
      // Without its day so far (as packing leaves a connection until the next count), every run is counted.
      await forgetAll();
      expect((await berlinHealth()).succeeded).toBe(before.succeeded - (changed.rowCount ?? 0));
    } finally {
      await db.sql.query(`UPDATE sync_run SET outcome = 'succeeded' WHERE id = ANY($1::uuid[])`, [
        changed.rows.map((row: { id: string }) => row.id),
      ]);
      await db.sql.query(`DELETE FROM sync_run WHERE connection_id = $1::uuid AND started_at > $2`, [
        berlin,
        HISTORY_NOW,
      ]);
      await db.sql.query('DELETE FROM sync_health_so_far');
    }
  }, 120_000);

  it('counts once a run whose sync was still committing when the day so far was counted', async () => {
    await pass();
    const before = await berlinHealth();
    // A sync whose run started two minutes before the count commits after it: the count's snapshot did not see it.
    const committing = await db.sql.connect();
    try {
      await committing.query('BEGIN');
      await insertRun(new Date(HISTORY_NOW.getTime() - 2 * 60_000), committing);
      await pass();
      await committing.query('COMMIT');
    } finally {
      committing.release();
    }
    expect((await berlinHealth()).succeeded).toBe(before.succeeded + 1);
    // The next count adds it to the day so far; the report still counts it once.
    await pass();
    expect((await berlinHealth()).succeeded).toBe(before.succeeded + 1);
    await db.sql.query(`DELETE FROM sync_run WHERE connection_id = $1::uuid AND started_at = $2`, [
      berlin,
      new Date(HISTORY_NOW.getTime() - 2 * 60_000),
    ]);
    await db.sql.query('DELETE FROM sync_health_so_far');
  }, 120_000);

  it('forgets the day so far of connections whose runs are packed, and answers the same before the next count', async () => {
    await pass();
    const counted = await syncHealthAnswers();
    // Yesterday's UTC day packed: in Kolkata and Lord Howe, whose local day began before UTC's, runs their day so
    // far counted leave sync_run.
    const batch = await compactHistoryBatch(db.prisma, new Date('2026-09-20T00:00:00Z'), null, 100);
    expect(batch.syncRuns).toBeGreaterThan(0);
    expect((await daysSoFar()).map((row) => row.stored_through)).toEqual(ids.connections.map(() => null));
    expect(differingAnswers(counted, await syncHealthAnswers())).toEqual([]);
    await pass();
    expect((await daysSoFar()).every((row) => row.stored_through !== null)).toBe(true);
    expect(differingAnswers(counted, await syncHealthAnswers())).toEqual([]);
  }, 300_000);

  it('keeps the latest error when a run that started earlier commits after the count', async () => {
    await pass();
    // Berlin's latest failure, counted in its day so far; a failure that started a minute before it commits late.
    const { rows } = await db.sql.query<{ started_at: Date }>(
      `SELECT max(started_at) AS started_at FROM sync_run WHERE connection_id = $1::uuid AND outcome = 'failed'
         AND started_at > $2::timestamptz - interval '12 hours'`,
      [berlin, HISTORY_NOW],
    );
    const latest = rows[0]!.started_at;
    expect(latest).not.toBeNull();
    // Its later runs taken away (and the day so far that counted them, as only retention removes runs), so that
    // the failure is the latest.
    await db.sql.query('DELETE FROM sync_run WHERE connection_id = $1::uuid AND started_at > $2', [
      berlin,
      latest,
    ]);
    await forgetAll();
    await pass();
    const committing = await db.sql.connect();
    try {
      await committing.query('BEGIN');
      await insertRun(new Date(latest.getTime() - 60_000), committing, true);
      await pass();
      await committing.query('COMMIT');
    } finally {
      committing.release();
    }
    const withDaySoFar = await berlinHealth();
    expect(withDaySoFar.last_error_at).toEqual(latest);
    // The same as counting every run of those days.
    await forgetAll();
    expect(withDaySoFar).toEqual(await berlinHealth());
  }, 120_000);

  it('counts a connection for the first time while a sync of it commits', async () => {
    await db.sql.query('DELETE FROM sync_health_so_far');
    // A sync's commit locks its connection's row and updates it (store/snapshots.ts), after the count's snapshot
    // and before its new row's key check on that connection.
    const syncCommits = async () => {
      const sync = await db.sql.connect();
      try {
        await sync.query('BEGIN');
        await sync.query('SELECT id FROM connection WHERE id = $1::uuid FOR UPDATE', [berlin]);
        await sync.query('UPDATE connection SET display_name = display_name WHERE id = $1::uuid', [berlin]);
        await sync.query('COMMIT');
      } finally {
        sync.release();
      }
    };
    const result = await pruneHistory(committingDuringTheCount(syncCommits), STORE_ONLY, {
      now: HISTORY_NOW,
      pause: async () => undefined,
    });
    expect(result.daysSoFarCounted).toBe(ids.connections.length);
    expect((await daysSoFar()).length).toBe(ids.connections.length);
  }, 120_000);

  it('counts the runs written before its migration as seen by every snapshot', async () => {
    const computed = await syncHealthAnswers();
    // As the migration leaves an installation's runs: no writer recorded.
    await db.sql.query('UPDATE sync_run SET recorded_xid = NULL');
    await db.sql.query('DELETE FROM sync_health_so_far');
    await pass();
    expect((await daysSoFar()).length).toBe(ids.connections.length);
    expect(differingAnswers(computed, await syncHealthAnswers())).toEqual([]);
  }, 300_000);
});
