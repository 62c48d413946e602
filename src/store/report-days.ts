// Report days stored once they are over (issue 43): the retention run computes each connection's local days that
// ended since its last run with the reports' own queries (utilization's figures: computedUtilizationDays; the
// bookings report's bookings and opened slots by day: computedBookingDays; sync-health's running totals:
// sync-health-days.ts; availability's sightings and closings: availability-days.ts; the bookings' running totals:
// booking-totals.ts) and keeps them, so an all-connection report reads a row per connection and day (two, for the
// running totals) instead of every slot, run and booking. A
// connection whose zone changed has its days counted again in the new one, from the history still kept. Stored days
// are kept for good, as bookings are: a report over days whose slots retention has pruned still answers what it did
// while they were kept. Availability's, the largest, are kept as long as the closed slots (retention.ts).
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { storeAvailabilityDays } from './report-queries/availability-days.js';
import { BOOKING_DAY_FIGURES, computedBookingDays } from './report-queries/booking-days.js';
import { storeBookingTotals } from './report-queries/booking-totals.js';
import { storeWeeks, sundayOnOrBefore } from './report-queries/booking-weeks.js';
import { localDay, takenFromExcluded } from './report-queries/report-sql.js';
import { PLAN_EACH_CALL } from './report-queries/report-session.js';
import type { ReportScope } from './report-queries/report-scope.js';
import {
  connectionZones,
  postgresZoneNames,
  postgresZoneStandIns,
  ReportZoneError,
  type ReportDb,
} from './report-queries/report-zones.js';
import { STORED_ZONE } from './report-queries/stored-days.js';
import { computedUtilizationDays, UTILIZATION_FIGURES } from './report-queries/utilization-rows.js';
import { storeSyncHealthDays, type ClaimedConnection } from './sync-health-days.js';

type Db = ReportDb & Pick<PrismaClient, '$executeRaw' | '$transaction'>;

/**
 * How long a day must have been over before it is stored. A sync stamps what it writes with the instant its
 * commit began, and the commit can take up to two minutes (store/snapshots.ts) on a worker whose clock may run a
 * little apart from this one's: an hour leaves no row of the day still to come.
 */
export const SETTLE_MS = 3_600_000;

/** Each stored table with its figures and the query that computes them. */
const STORED_TABLES = [
  { table: 'utilization_day', figures: UTILIZATION_FIGURES, computed: computedUtilizationDays },
  { table: 'booking_day', figures: BOOKING_DAY_FIGURES, computed: computedBookingDays },
] as const;

/**
 * `INSERT INTO table (connection_id, day, …figures) SELECT …` of the computed days up to `through` (over alias
 * `c`, each connection's own), as the body of a CTE beside `claimed` (storeBatchDays): only the claimed
 * connections' days.
 */
function insertDays(
  { table, figures, computed }: (typeof STORED_TABLES)[number],
  query: ReportScope,
  through: Prisma.Sql,
): Prisma.Sql {
  const columns = Prisma.raw(['connection_id', 'day', ...figures].join(', '));
  const updates = takenFromExcluded(figures);
  return Prisma.sql`
    INSERT INTO ${Prisma.raw(table)} (${columns})
    SELECT ${Prisma.raw(['connection_id', 'day', ...figures].map((column) => `d.${column}`).join(', '))}
    FROM (${computed(query, true)}) d JOIN connection c ON c.id = d.connection_id
    WHERE d.day <= ${through} AND c.id IN (SELECT id FROM claimed)
    ON CONFLICT (connection_id, day) DO UPDATE SET ${updates}
    RETURNING 1`;
}

/** A connection whose days could not be stored this run, and why; the next run tries again. */
export interface ReportDayFailure {
  connectionId: string;
  error: unknown;
}

/**
 * The zones a run counts days in: every connection's, as names Postgres knows (report-zones.ts), read once a run
 * rather than once a connection. `unknown`: zones with no stand-in, whose connections' days cannot be counted.
 */
interface StoringZones {
  scope: ReportScope;
  unknown: readonly string[];
}

async function storingZones(db: Db, now: Date, connectionId?: string): Promise<StoringZones> {
  const zones = await connectionZones(db, connectionId);
  const { standIns, unknown } = await postgresZoneStandIns(db, postgresZoneNames(), zones, now);
  return { scope: { at: now, ...(standIns.size === 0 ? {} : { postgresZones: standIns }) }, unknown };
}

/** The last day to store of connection alias `c` at `now`: the one before the day it was SETTLE_MS ago. */
function lastDayToStore(scope: ReportScope, now: Date): Prisma.Sql {
  const settled = new Date(now.getTime() - SETTLE_MS);
  return Prisma.sql`${localDay(scope, Prisma.sql`${settled}::timestamptz`)} - 1`;
}

/**
 * Whether connection alias `c`, with its report_days_stored row `s` (LEFT JOINed), has days to store at `now`:
 * none stored yet, stored in a zone it no longer has, or a day over since. The same days storeBatchDays
 * stores: a connection that has none is not visited at all, so a run costs a statement a connection only once a
 * day, when its day is over, not once an hour.
 */
function hasDaysToStore(scope: ReportScope, now: Date, moreThanOne = false): Prisma.Sql {
  const behind = moreThanOne ? Prisma.sql`${lastDayToStore(scope, now)} - 1` : lastDayToStore(scope, now);
  // Weeks and the bookings' running totals are stored from bookings and stored days, never the whole history of
  // slots and runs: none stored yet is not catching up.
  const fromBookings = moreThanOne
    ? Prisma.empty
    : Prisma.sql`OR ${weeksBehind(behind)}
        OR s.booking_totals_through IS NULL OR s.booking_totals_through < ${behind}`;
  return Prisma.sql`(s.connection_id IS NULL OR s.zone <> ${STORED_ZONE} OR s.through < ${behind}
    OR s.sync_health_through IS NULL OR s.sync_health_through < ${behind}
    OR s.availability_through IS NULL OR s.availability_through < ${behind} ${fromBookings})`;
}

/** Whether report_days_stored `s` has weeks over by `through` (a day) not stored yet. */
const weeksBehind = (through: Prisma.Sql) =>
  Prisma.sql`(s.weeks_through IS NULL OR s.weeks_through < ${sundayOnOrBefore(through)})`;

/** A connection a batch stores the days of, with how far its weeks are stored and will be. */
interface ClaimedWithWeeks extends ClaimedConnection {
  previousWeeksThrough: string | null;
  /** How far its bookings' running totals are stored (null: none). */
  previousTotalsThrough: string | null;
  weeksThrough: string;
}

/**
 * Stores the local days of the connections of `batch` that were over SETTLE_MS before `now` and are not stored
 * yet, each in its zone (or UTC; Postgres's own name stands in for a zone it lacks, as in a report), in one
 * transaction of at most nine statements whatever the batch's size: planning the days' query costs several times
 * running it for a connection's day (4–7 ms against ~1 with no history). The number of rows stored.
 */
async function storeBatchDays(
  db: Db,
  batch: readonly string[],
  now: Date,
  zones: ReportScope,
): Promise<number> {
  const query: ReportScope = { ...zones, connectionBatch: batch };
  const through = lastDayToStore(query, now);
  return db.$transaction(
    async (tx) => {
      // The reports' own statements, planned as a report's are: for this batch's connections and days.
      await tx.$queryRaw(Prisma.sql`SELECT ${PLAN_EACH_CALL}`);
      // Days counted in a zone a connection no longer has are counted again from what is kept: deleted in the
      // transaction that stores them again, so that a zone the store cannot count in (one Postgres lacks, moved
      // to since the pass began) fails both and keeps them.
      await tx.$executeRaw(Prisma.sql`
        WITH moved AS (
          DELETE FROM report_days_stored s USING connection c
          WHERE c.id = s.connection_id AND c.id = ANY(${batch}::uuid[]) AND s.zone <> ${STORED_ZONE}
          RETURNING s.connection_id
        ), utilization AS (
          DELETE FROM utilization_day u USING moved m WHERE u.connection_id = m.connection_id
        ), health AS (
          DELETE FROM sync_health_day h USING moved m WHERE h.connection_id = m.connection_id
        ), weeks AS (
          DELETE FROM booking_week w USING moved m WHERE w.connection_id = m.connection_id
        ), availability AS (
          DELETE FROM availability_day a USING moved m WHERE a.connection_id = m.connection_id
        ), closings AS (
          DELETE FROM availability_day_closing k USING moved m WHERE k.connection_id = m.connection_id
        ), totals AS (
          DELETE FROM booking_total_day t USING moved m WHERE t.connection_id = m.connection_id
        )
        DELETE FROM booking_day o USING moved m WHERE o.connection_id = m.connection_id`);
      // Only while the connection is behind and its stored days (if any) are in its zone as this transaction
      // sees it, and not while a sync's commit holds its row: the rows' key check would wait for that commit, and
      // the next run stores them. Each connection's days and how far they go are stored together or not at all.
      const claimed = await tx.$queryRaw<ClaimedWithWeeks[]>(Prisma.sql`
        SELECT c.id::text AS id, s.sync_health_through::text AS "previousThrough",
               s.weeks_through::text AS "previousWeeksThrough",
               s.booking_totals_through::text AS "previousTotalsThrough",
               ${sundayOnOrBefore(through)}::text AS "weeksThrough"
        FROM connection c LEFT JOIN report_days_stored s ON s.connection_id = c.id
        WHERE c.id = ANY(${batch}::uuid[]) AND (s.zone IS NULL OR s.zone = ${STORED_ZONE})
          AND (s.through IS NULL OR s.through < ${through}
               OR s.sync_health_through IS NULL OR s.sync_health_through < ${through}
               OR s.availability_through IS NULL OR s.availability_through < ${through}
               OR s.booking_totals_through IS NULL OR s.booking_totals_through < ${through} OR ${weeksBehind(through)})
        FOR KEY SHARE OF c SKIP LOCKED`);
      if (claimed.length === 0) return 0;
      const ids = claimed.map(({ id }) => id);
      // Before report_days_stored moves on: the running totals go on from the days its sync_health_through says
      // are stored.
      const health = await storeSyncHealthDays(tx, claimed, zones, through);
      const [utilization, bookings] = STORED_TABLES.map((table) => insertDays(table, query, through));
      const [done] = await tx.$queryRaw<{ rows: number }[]>(Prisma.sql`
        WITH claimed AS (SELECT unnest(${ids}::uuid[]) AS id),
        utilization AS (${utilization!}), bookings AS (${bookings!}), marked AS (
          INSERT INTO report_days_stored (connection_id, zone, through, sync_health_through)
          SELECT c.id, ${STORED_ZONE}, ${through}, ${through} FROM connection c JOIN claimed k ON k.id = c.id
          -- Never back: a run whose clock is behind the last one's (claimed for a mark not set yet) stores no day,
          -- and a running total goes on from the day its mark says.
          ON CONFLICT (connection_id) DO UPDATE
            SET zone = EXCLUDED.zone, through = GREATEST(report_days_stored.through, EXCLUDED.through),
                sync_health_through = GREATEST(report_days_stored.sync_health_through, EXCLUDED.sync_health_through)
        )
        SELECT ((SELECT COUNT(*) FROM utilization) + (SELECT COUNT(*) FROM bookings))::int AS rows`);
      // After report_days_stored has each connection's row: they go on from its availability_through.
      const availability = await storeAvailabilityDays(tx, { ...zones, connectionBatch: ids }, through, now);
      const fresh = claimed.filter((c) => c.previousTotalsThrough === null).map(({ id }) => id);
      const totals = await storeBookingTotals(tx, { ...zones, connectionBatch: ids }, fresh, through);
      // A week is over once a week, so most runs' batches have none to store: no statement for them.
      const weeks = claimed.some((c) => c.weeksThrough !== c.previousWeeksThrough)
        ? await storeWeeks(tx, { ...query, connectionBatch: ids }, ids)
        : 0;
      return (done?.rows ?? 0) + health + availability + totals + weeks;
    },
    // One snapshot: the claim, the days counted and the marker all see the connection's zone and stored days as
    // they were when the transaction began, whatever a reconnect or an overlapping run commits meanwhile (an
    // overlapping run's rows make this one fail to serialize, and its connections wait for the next run). A
    // connection catching up reads its whole history (0.5–1.2 s with a year at the default bands); Prisma's
    // default is 5 s.
    { maxWait: 10_000, timeout: 120_000, isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead },
  );
}

/** A connection to visit: one with days to store, or one in a zone no stand-in keeps (a failure, reported). */
interface DueConnection {
  id: string;
  /** Its zone, when no name Postgres knows keeps its time. */
  unknownZone: string | null;
  /**
   * More than the one day since the last run to store (none stored yet, a zone it moved to, runs missed): its
   * whole history may be read, so it is stored on its own and holds its row no longer than that takes.
   */
  catchingUp: boolean;
}

/**
 * Stores the days of the connections `due` (storeBatchDays), together; when that fails, each on its own, so that
 * one that fails (a statement cancelled, a day its zone cannot count) is reported and skipped. A connection in a
 * zone no stand-in keeps is reported without a statement.
 */
async function storeDueDays(
  db: Db,
  due: readonly DueConnection[],
  now: Date,
  zones: StoringZones,
): Promise<{ rows: number; failures: ReportDayFailure[] }> {
  const failures: ReportDayFailure[] = due.flatMap(({ id, unknownZone }) =>
    unknownZone === null ? [] : [{ connectionId: id, error: new ReportZoneError(unknownZone) }],
  );
  const countable = due.filter((connection) => connection.unknownZone === null);
  const batch = countable.filter((connection) => !connection.catchingUp).map(({ id }) => id);
  const alone = countable.filter((connection) => connection.catchingUp).map(({ id }) => id);
  let rows = 0;
  if (batch.length > 1) {
    try {
      rows += await storeBatchDays(db, batch, now, zones.scope);
    } catch {
      // Each on its own below, to find the one that fails.
      alone.push(...batch);
    }
  } else {
    alone.push(...batch);
  }
  for (const id of alone) {
    try {
      rows += await storeBatchDays(db, [id], now, zones.scope);
    } catch (error: unknown) {
      failures.push({ connectionId: id, error });
    }
  }
  return { rows, failures };
}

/** Stores the days of `connectionIds` that are over, each on its own (storeDueDays). */
export async function storeReportDays(
  db: Db,
  connectionIds: readonly string[],
  now: Date,
): Promise<{ rows: number; failures: ReportDayFailure[] }> {
  let rows = 0;
  const failures: ReportDayFailure[] = [];
  for (const id of connectionIds) {
    const zones = await storingZones(db, now, id);
    const due = { id, unknownZone: zones.unknown[0] ?? null, catchingUp: true };
    const stored = await storeDueDays(db, [due], now, zones);
    rows += stored.rows;
    failures.push(...stored.failures);
  }
  return { rows, failures };
}

/** A run's pass over every connection's report days, a batch at a time (storeReportDayBatch). */
export interface ReportDayPass {
  zones: StoringZones;
}

/** What a run needs before its first batch: the zones, read once for every connection. */
export async function beginReportDayPass(db: Db, now: Date): Promise<ReportDayPass> {
  return { zones: await storingZones(db, now) };
}

/**
 * Stores the days of the next `connections` connections after `afterId` (by id) that have days to store, and
 * reports those in a zone no stand-in keeps; connections with nothing to store are skipped in the same statement.
 */
export async function storeReportDayBatch(
  db: Db,
  pass: ReportDayPass,
  now: Date,
  afterId: string | null,
  connections: number,
): Promise<{ lastConnectionId: string | null; rows: number; failures: ReportDayFailure[] }> {
  const due = await dueConnections(db, pass.zones, now, afterId, connections).catch(async () => {
    // A connection in a zone Postgres lacks that the pass did not read (new, or moved since it began), where
    // Postgres evaluated its day before the condition that makes it due anyway: the zones again, once.
    pass.zones = await storingZones(db, now);
    return dueConnections(db, pass.zones, now, afterId, connections);
  });
  return {
    lastConnectionId: due[due.length - 1]?.id ?? null,
    ...(await storeDueDays(db, due, now, pass.zones)),
  };
}

/** The next `connections` connections after `afterId` with days to store or in a zone no stand-in keeps. */
function dueConnections(
  db: Db,
  { scope, unknown }: StoringZones,
  now: Date,
  afterId: string | null,
  connections: number,
): Promise<DueConnection[]> {
  // A zone Postgres cannot count in is never named in a day's SQL: its connections are due, to be reported.
  return db.$queryRaw<DueConnection[]>(Prisma.sql`
    SELECT c.id::text AS id,
           CASE WHEN c.timezone = ANY(${unknown}::text[]) THEN c.timezone END AS "unknownZone",
           CASE WHEN c.timezone = ANY(${unknown}::text[]) THEN false
                ELSE ${hasDaysToStore(scope, now, true)} END AS "catchingUp"
    FROM connection c LEFT JOIN report_days_stored s ON s.connection_id = c.id
    WHERE (${afterId}::uuid IS NULL OR c.id > ${afterId}::uuid)
      AND CASE WHEN c.timezone = ANY(${unknown}::text[]) THEN true ELSE ${hasDaysToStore(scope, now)} END
    ORDER BY c.id LIMIT ${connections}`);
}
