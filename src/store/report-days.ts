// Report days stored once they are over (issue 43): the retention run computes each connection's local days that
// ended since its last run with the reports' own queries (utilization's figures: computedUtilizationDays; the
// bookings report's bookings and opened slots by day: computedBookingDays) and keeps them, so an all-connection report reads a row per
// connection and day instead of every slot. A connection whose zone changed has its days counted again in the
// new one, from the history still kept; the stored days go when their slots' retention ends.
import { Prisma } from '../generated/prisma/client.js';
import { BOOKING_DAY_FIGURES, computedBookingDays } from './report-queries/booking-periods.js';
import { localDay } from './report-queries/report-sql.js';
import { withPostgresZones, type ReportDb } from './report-queries/report-zones.js';
import { STORED_ZONE } from './report-queries/stored-days.js';
import { computedUtilizationDays, UTILIZATION_FIGURES } from './report-queries/utilization-rows.js';

type Db = ReportDb & { $executeRaw: (query: Prisma.Sql) => Promise<number> };

/** Each stored table with its figures and the query that computes them. */
const STORED_TABLES = [
  { table: 'utilization_day', figures: UTILIZATION_FIGURES, computed: computedUtilizationDays },
  { table: 'booking_day', figures: BOOKING_DAY_FIGURES, computed: computedBookingDays },
] as const;

/** `INSERT INTO table (connection_id, day, …figures) SELECT …` of the computed days up to `through`, as a CTE body. */
function insertDays(
  { table, figures, computed }: (typeof STORED_TABLES)[number],
  query: Parameters<typeof computedUtilizationDays>[0],
  through: Prisma.Sql,
): Prisma.Sql {
  const columns = Prisma.raw(['connection_id', 'day', ...figures].join(', '));
  const updates = Prisma.raw(figures.map((figure) => `${figure} = EXCLUDED.${figure}`).join(', '));
  return Prisma.sql`
    INSERT INTO ${Prisma.raw(table)} (${columns})
    SELECT ${Prisma.raw(['connection_id', 'day', ...figures].map((column) => `d.${column}`).join(', '))}
    FROM (${computed(query, true)}) d JOIN connection c ON c.id = d.connection_id
    WHERE d.day <= ${through}
    ON CONFLICT (connection_id, day) DO UPDATE SET ${updates}
    RETURNING 1`;
}

/**
 * Stores the local days of `connectionIds` that are over at `now` and not stored yet, in each connection's zone
 * (or UTC). Postgres's own names stand in for zones it lacks, as in a report. The number of rows stored.
 */
export async function storeReportDays(db: Db, connectionIds: string[], now: Date): Promise<number> {
  if (connectionIds.length === 0) return 0;
  const scope = await withPostgresZones(db, { at: now });
  const yesterday = Prisma.sql`${localDay(scope, Prisma.sql`${now}::timestamptz`)} - 1`;
  // Days counted in a zone the connection no longer has are counted again from what is kept.
  await db.$executeRaw(Prisma.sql`
    WITH moved AS (
      DELETE FROM report_days_stored s USING connection c
      WHERE c.id = s.connection_id AND c.id = ANY(${connectionIds}::uuid[]) AND s.zone <> ${STORED_ZONE}
      RETURNING s.connection_id
    ), utilization AS (
      DELETE FROM utilization_day u USING moved m WHERE u.connection_id = m.connection_id
    )
    DELETE FROM booking_day o USING moved m WHERE o.connection_id = m.connection_id`);
  const behind = await db.$queryRaw<{ id: string }[]>(Prisma.sql`
    SELECT c.id::text AS id FROM connection c LEFT JOIN report_days_stored s ON s.connection_id = c.id
    WHERE c.id = ANY(${connectionIds}::uuid[]) AND (s.through IS NULL OR s.through < ${yesterday})`);
  let stored = 0;
  for (const { id } of behind) {
    const query = { ...scope, connectionId: id };
    // One statement: the days and how far they go are stored together or not at all.
    const [utilization, bookings] = STORED_TABLES.map((table) => insertDays(table, query, yesterday));
    const [done] = await db.$queryRaw<{ rows: number }[]>(Prisma.sql`
      WITH utilization AS (${utilization!}), bookings AS (${bookings!}), through AS (
        INSERT INTO report_days_stored (connection_id, zone, through)
        SELECT c.id, ${STORED_ZONE}, ${yesterday} FROM connection c WHERE c.id = ${id}::uuid
        ON CONFLICT (connection_id) DO UPDATE SET zone = EXCLUDED.zone, through = EXCLUDED.through
        RETURNING 1
      )
      SELECT ((SELECT COUNT(*) FROM utilization) + (SELECT COUNT(*) FROM bookings))::int AS rows,
             (SELECT COUNT(*) FROM through)::int AS marked`);
    stored += done?.rows ?? 0;
  }
  return stored;
}

/** Stores the days of the connections after `afterId` (by id), `connections` of them (storeReportDays). */
export async function storeReportDayBatch(
  db: Db,
  now: Date,
  afterId: string | null,
  connections: number,
): Promise<{ lastConnectionId: string | null; rows: number }> {
  const ids = (
    await db.$queryRaw<{ id: string }[]>(Prisma.sql`
      SELECT id::text FROM connection WHERE ${afterId}::uuid IS NULL OR id > ${afterId}::uuid
      ORDER BY id LIMIT ${connections}`)
  ).map((row) => row.id);
  if (ids.length === 0) return { lastConnectionId: null, rows: 0 };
  return { lastConnectionId: ids[ids.length - 1] ?? null, rows: await storeReportDays(db, ids, now) };
}

/** One batch of stored days before `cutoff`'s UTC day (their slots' retention is over), deleted from both tables. */
export async function pruneReportDayBatch(db: Db, cutoff: Date, batchSize: number): Promise<number> {
  let deleted = 0;
  for (const { table } of STORED_TABLES) {
    deleted += await db.$executeRaw(Prisma.sql`
      DELETE FROM ${Prisma.raw(table)} u USING (
        SELECT connection_id, day FROM ${Prisma.raw(table)}
        WHERE day < (${cutoff}::timestamptz AT TIME ZONE 'UTC')::date
        ORDER BY day LIMIT ${batchSize} FOR UPDATE SKIP LOCKED
      ) d
      WHERE u.connection_id = d.connection_id AND u.day = d.day`);
  }
  return deleted;
}
