// sync-health's day so far (issue 43): the retention run counts what each connection's runs since its stored days
// came to, as of a snapshot, and a report up to now reads that and counts only the runs the snapshot did not see:
// those started since, and those whose sync was still committing. Every sync-health answer stays what counting
// every run gives; packing or pruning the runs it counted makes the connection's day so far counted again.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseReportQuery } from '../../src/reports/report-query.js';
import { compactHistoryBatch } from '../../src/store/history-compaction.js';
import { pruneHistory, type RetentionSettings } from '../../src/store/retention.js';
import { createReportStore } from '../../src/store/reports.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { generateMixedHistory, HISTORY_NOW } from './mixed-history.js';
import { allReportAnswers, differingAnswers } from './report-answers.js';

const HOUR_MS = 3_600_000;
const STORE_ONLY: RetentionSettings = {
  syncRunDays: 0,
  closedSlotDays: 0,
  compactAfterDays: 0,
  batchSize: 1000,
};
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
    await db.sql.query<{ connection_id: string; attempts: number }>(
      'SELECT connection_id::text, attempts FROM sync_health_so_far',
    )
  ).rows;

/** A successful run of Berlin's, started at `startedAt`, as a sync records it; on `client` when given. */
const insertRun = (startedAt: Date, client: { query: typeof db.sql.query } = db.sql) =>
  client.query(
    `INSERT INTO sync_run (id, connection_id, started_at, finished_at, outcome, upstream_calls)
     VALUES (gen_random_uuid(), $1::uuid, $2, $2::timestamptz + interval '2 seconds', 'succeeded', 3)`,
    [berlin, startedAt],
  );

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
      await db.sql.query('DELETE FROM sync_health_so_far WHERE connection_id = $1::uuid', [berlin]);
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
    expect(await daysSoFar()).toEqual([]);
    expect(differingAnswers(counted, await syncHealthAnswers())).toEqual([]);
    await pass();
    expect((await daysSoFar()).length).toBe(ids.connections.length);
    expect(differingAnswers(counted, await syncHealthAnswers())).toEqual([]);
  }, 300_000);

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
