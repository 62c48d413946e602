// Utilization's days, stored once they are over (issue 43): the retention pass computes each connection's local
// days that ended since its last pass with the report's own query (report-queries/utilization-rows.ts,
// computedUtilizationDays) and keeps the figures, so an all-connection report reads a row per connection and
// day instead of every slot. A connection whose zone changed has its days counted again in the new one, from
// the history still kept; the stored days go when their slots' retention ends.
import { Prisma } from '../generated/prisma/client.js';
import { computedUtilizationDays, STORED_ZONE } from './report-queries/utilization-rows.js';
import { localDay } from './report-queries/report-sql.js';
import { withPostgresZones, type ReportDb } from './report-queries/report-zones.js';

type Db = ReportDb & { $executeRaw: (query: Prisma.Sql) => Promise<number> };

/**
 * Stores the local days of `connectionIds` that are over at `now` and not stored yet, in each connection's zone
 * (or UTC). Postgres's own names stand in for zones it lacks, as in a report. The number of days stored.
 */
export async function storeUtilizationDays(db: Db, connectionIds: string[], now: Date): Promise<number> {
  if (connectionIds.length === 0) return 0;
  const scope = await withPostgresZones(db, { at: now });
  const yesterday = Prisma.sql`${localDay(scope, Prisma.sql`${now}::timestamptz`)} - 1`;
  // Days counted in a zone the connection no longer has are counted again from what is kept.
  await db.$executeRaw(Prisma.sql`
    WITH moved AS (
      DELETE FROM utilization_stored s USING connection c
      WHERE c.id = s.connection_id AND c.id = ANY(${connectionIds}::uuid[]) AND s.zone <> ${STORED_ZONE}
      RETURNING s.connection_id
    )
    DELETE FROM utilization_day u USING moved m WHERE u.connection_id = m.connection_id`);
  const behind = await db.$queryRaw<{ id: string }[]>(Prisma.sql`
    SELECT c.id::text AS id FROM connection c LEFT JOIN utilization_stored s ON s.connection_id = c.id
    WHERE c.id = ANY(${connectionIds}::uuid[]) AND (s.through IS NULL OR s.through < ${yesterday})`);
  let stored = 0;
  for (const { id } of behind) {
    const query = { ...scope, connectionId: id };
    const [done] = await db.$queryRaw<{ days: number }[]>(Prisma.sql`
      WITH days AS (${computedUtilizationDays(query, true)}), kept AS (
        INSERT INTO utilization_day (connection_id, day, offered_minutes, bookings, booked_minutes)
        SELECT connection_id, day, offered_minutes, bookings, booked_minutes FROM days
        ON CONFLICT (connection_id, day) DO UPDATE SET offered_minutes = EXCLUDED.offered_minutes,
          bookings = EXCLUDED.bookings, booked_minutes = EXCLUDED.booked_minutes
        RETURNING 1
      ), through AS (
        INSERT INTO utilization_stored (connection_id, zone, through)
        SELECT c.id, ${STORED_ZONE}, ${yesterday} FROM connection c WHERE c.id = ${id}::uuid
        ON CONFLICT (connection_id) DO UPDATE SET zone = EXCLUDED.zone, through = EXCLUDED.through
        RETURNING 1
      )
      SELECT (SELECT COUNT(*) FROM kept)::int AS days, (SELECT COUNT(*) FROM through)::int AS marked`);
    stored += done?.days ?? 0;
  }
  return stored;
}

/** Stores the days of the connections after `afterId` (by id), `connections` of them (storeUtilizationDays). */
export async function storeUtilizationDayBatch(
  db: Db,
  now: Date,
  afterId: string | null,
  connections: number,
): Promise<{ lastConnectionId: string | null; days: number }> {
  const ids = (
    await db.$queryRaw<{ id: string }[]>(Prisma.sql`
      SELECT id::text FROM connection WHERE ${afterId}::uuid IS NULL OR id > ${afterId}::uuid
      ORDER BY id LIMIT ${connections}`)
  ).map((row) => row.id);
  if (ids.length === 0) return { lastConnectionId: null, days: 0 };
  return { lastConnectionId: ids[ids.length - 1] ?? null, days: await storeUtilizationDays(db, ids, now) };
}

/** One batch of stored days before `cutoff`'s UTC day (their slots' retention is over), deleted. */
export async function pruneUtilizationDayBatch(db: Db, cutoff: Date, batchSize: number): Promise<number> {
  return db.$executeRaw(Prisma.sql`
    DELETE FROM utilization_day u USING (
      SELECT connection_id, day FROM utilization_day
      WHERE day < (${cutoff}::timestamptz AT TIME ZONE 'UTC')::date
      ORDER BY day LIMIT ${batchSize} FOR UPDATE SKIP LOCKED
    ) d
    WHERE u.connection_id = d.connection_id AND u.day = d.day`);
}
