// The history a report reads, in whichever form it is kept: the rows of the live tables (slot, sync_run) and the
// packed days (slot_history, sync_run_history: store/history-compaction.ts), as one relation with the live
// table's columns. A report puts its own conditions on that relation (Postgres pushes them into both branches,
// so the live branch keeps its indexes); the bounds given here let the packed branch skip whole days that
// cannot hold a row in range, so its cost grows with the days read, not with the history kept.
import { Prisma } from '../../generated/prisma/client.js';

/** Bounds on what a report reads: instants (SQL expressions), each optional. */
export interface HistoryBounds {
  connectionId?: string | undefined;
  /** Only these connections: an SQL expression of a uuid[] (a subquery Postgres evaluates once). */
  connectionIds?: Prisma.Sql | undefined;
  /** starts_at (started_at for runs) ≥ this … */
  startsFrom?: Prisma.Sql | undefined;
  /** … and < this (or ≤: either way only the UTC day is used). */
  startsUntil?: Prisma.Sql | undefined;
  /** Slots: first_seen_at ≤ this. */
  seenBy?: Prisma.Sql | undefined;
  /** Slots: first_seen_at ≥ this … */
  seenFrom?: Prisma.Sql | undefined;
  /** … and < this. */
  seenUntil?: Prisma.Sql | undefined;
  /** Slots: gone_at > this. */
  goneAfter?: Prisma.Sql | undefined;
  /**
   * Runs: for each packed day (an SQL instant over its alias h, so per connection), the instant its runs are read
   * from; those before it are never unnested. A day's runs are packed in the order they started
   * (store/history-compaction.ts), so they are a prefix of its arrays. Where a report's start differs by
   * connection (sync-health's days after the stored ones), a single startsFrom is the earliest of them all.
   */
  packedRunsFrom?: Prisma.Sql | undefined;
  /**
   * syncRunRecords: only the live runs, with their change_staleness (sync-health's runs a snapshot did not see:
   * every packed run was seen).
   */
  liveOnly?: boolean | undefined;
}

// An enum's values, looked up once per query (an uncorrelated subquery is an InitPlan): enum_range read per
// packed element searched pg_enum for each one, two buffer hits a run (test/reports/packed-history-cost.test.ts).
// Unnesting every run of 100 connections' 90 packed days: 30.6 s with a search each, 5.5 s with this.
const closeReasons = Prisma.sql`(SELECT enum_range(NULL::slot_close_reason))`;
const outcomes = Prisma.sql`(SELECT enum_range(NULL::sync_outcome))`;

const utcDay = (instant: Prisma.Sql) => Prisma.sql`((${instant}) AT TIME ZONE 'UTC')::date`;

/** Conditions on a packed day (alias h) that no row of it in `bounds` can fail. */
function packedDayConditions(bounds: HistoryBounds, seenColumns: boolean): Prisma.Sql {
  const parts: Prisma.Sql[] = [Prisma.sql`TRUE`];
  if (bounds.connectionId !== undefined)
    parts.push(Prisma.sql`h.connection_id = ${bounds.connectionId}::uuid`);
  if (bounds.connectionIds !== undefined)
    parts.push(Prisma.sql`h.connection_id = ANY(${bounds.connectionIds})`);
  if (bounds.startsFrom !== undefined) parts.push(Prisma.sql`h.day >= ${utcDay(bounds.startsFrom)}`);
  if (bounds.startsUntil !== undefined) parts.push(Prisma.sql`h.day <= ${utcDay(bounds.startsUntil)}`);
  if (seenColumns) {
    if (bounds.seenBy !== undefined) parts.push(Prisma.sql`h.first_seen_from <= ${bounds.seenBy}`);
    if (bounds.seenFrom !== undefined) parts.push(Prisma.sql`h.first_seen_until >= ${bounds.seenFrom}`);
    if (bounds.seenUntil !== undefined) parts.push(Prisma.sql`h.first_seen_from < ${bounds.seenUntil}`);
    if (bounds.goneAfter !== undefined) parts.push(Prisma.sql`h.gone_until > ${bounds.goneAfter}`);
  }
  return Prisma.join(parts, ' AND ');
}

function liveConnection(bounds: HistoryBounds, alias: string): Prisma.Sql {
  const column = Prisma.raw(`${alias}.connection_id`);
  return Prisma.join(
    [
      Prisma.empty,
      ...(bounds.connectionId === undefined ? [] : [Prisma.sql`${column} = ${bounds.connectionId}::uuid`]),
      ...(bounds.connectionIds === undefined ? [] : [Prisma.sql`${column} = ANY(${bounds.connectionIds})`]),
    ],
    ' AND ',
  );
}

/**
 * Every slot row, live or packed: (connection_id, upstream_event_id, starts_at, ends_at, first_seen_at, gone_at,
 * close_reason), as a parenthesised subquery to alias.
 */
export function slotRecords(bounds: HistoryBounds): Prisma.Sql {
  return Prisma.sql`(
    SELECT s.connection_id, s.upstream_event_id, s.starts_at, s.ends_at, s.first_seen_at, s.gone_at, s.close_reason
    FROM slot s WHERE TRUE ${liveConnection(bounds, 's')}
    UNION ALL
    SELECT h.connection_id, h.event_ids[u.event_index], p.starts_at,
           p.starts_at + u.length_ms * interval '1 millisecond',
           p.starts_at + u.seen_ms * interval '1 millisecond',
           p.starts_at + u.gone_ms * interval '1 millisecond',
           (${closeReasons})[u.close_reason]
    FROM slot_history h
    CROSS JOIN LATERAL unnest(h.event_index, h.start_ms, h.length_ms, h.seen_ms, h.gone_ms, h.close_reason)
      AS u(event_index, start_ms, length_ms, seen_ms, gone_ms, close_reason)
    CROSS JOIN LATERAL (
      SELECT (h.day::timestamp AT TIME ZONE 'UTC') + u.start_ms * interval '1 millisecond' AS starts_at
    ) p
    WHERE ${packedDayConditions(bounds, true)}
  )`;
}

/**
 * A packed day's (alias h) runs from bounds.packedRunsFrom on: `first`, the index of the first run at or after it,
 * and `slice`, an array's subscript from there (empty without a bound: no copy of the arrays). The instant is
 * computed once a day, as milliseconds into the day (OFFSET 0 keeps it from being inlined into the count), so that
 * each run's start (`startedMs`, the day's started_ms) is compared as the integer it is stored as.
 */
function packedRunsFrom(
  bounds: HistoryBounds,
  startedMs: Prisma.Sql,
): { join: Prisma.Sql; slice: Prisma.Sql; first: Prisma.Sql } {
  if (bounds.packedRunsFrom === undefined)
    return { join: Prisma.empty, slice: Prisma.empty, first: Prisma.sql`1` };
  return {
    join: Prisma.sql`CROSS JOIN LATERAL (
      SELECT CASE WHEN isfinite(a.from_at)
                  THEN EXTRACT(EPOCH FROM (a.from_at - (h.day::timestamp AT TIME ZONE 'UTC')))::float8 * 1000
                  WHEN a.from_at > 'epoch'::timestamptz THEN 'infinity'::float8
                  ELSE '-infinity'::float8 END AS from_ms
      FROM (SELECT ${bounds.packedRunsFrom} AS from_at) a OFFSET 0
    ) b0
    CROSS JOIN LATERAL (SELECT 1 + count(*)::int AS first FROM unnest(${startedMs}) m WHERE m < b0.from_ms) f0`,
    slice: Prisma.sql`[f0.first:]`,
    first: Prisma.sql`f0.first`,
  };
}

/**
 * Every finished or recorded sync run, live or packed: (connection_id, outcome, started_at, error_code,
 * error_message, upstream_calls, seconds, recorded_xid: the live run's writer, null when packed), seconds being
 * finished_at − started_at; with liveOnly, change_staleness too (what changeStalenessRecords unnests), so that a
 * reader of the live runs alone reads each run once. Seconds as float8 (date_part), the same
 * value EXTRACT's numeric gave once cast, in two thirds of the time (2.16 million live runs: 0.5-0.6 s, 0.9-1.0 s);
 * a packed run's milliseconds divided as float8 too, the same value as through numeric (4.3 million: 0.3 s, 1.2 s).
 */
export function syncRunRecords(bounds: HistoryBounds): Prisma.Sql {
  const from = packedRunsFrom(bounds, Prisma.sql`h.started_ms`);
  const live = (more: Prisma.Sql) => Prisma.sql`
    SELECT r.connection_id, r.outcome, r.started_at, r.error_code, r.error_message, r.upstream_calls,
           date_part('epoch', r.finished_at - r.started_at) AS seconds, r.recorded_xid ${more}
    FROM sync_run r WHERE TRUE ${liveConnection(bounds, 'r')}`;
  if (bounds.liveOnly) return Prisma.sql`(${live(Prisma.sql`, r.change_staleness`)})`;
  return Prisma.sql`(${live(Prisma.empty)}
    UNION ALL
    SELECT h.connection_id, (${outcomes})[u.outcome],
           (h.day::timestamp AT TIME ZONE 'UTC') + u.started_ms * interval '1 millisecond',
           u.error_code, u.error_message, u.upstream_calls, u.duration_ms / 1000::float8, NULL::bigint
    FROM sync_run_history h
    ${from.join}
    CROSS JOIN LATERAL unnest(h.outcome${from.slice}, h.started_ms${from.slice}, h.error_code${from.slice},
                              h.error_message${from.slice}, h.upstream_calls${from.slice}, h.duration_ms${from.slice})
      AS u(outcome, started_ms, error_code, error_message, upstream_calls, duration_ms)
    WHERE ${packedDayConditions(bounds, false)}
  )`;
}

/** A live run's (alias r) staleness entries (alias s): a row per band and bound, of STALENESS_ENTRY's columns. */
export const EACH_STALENESS_ENTRY = Prisma.sql`
  CROSS JOIN LATERAL jsonb_to_recordset(r.change_staleness) AS s(band text, "boundSeconds" float8, changes int)`;
/** An entry's columns: band, bound_seconds, changes. */
export const STALENESS_ENTRY = Prisma.sql`s.band, s."boundSeconds" AS bound_seconds, s.changes`;

/**
 * The slot changes successful runs stored, with their staleness bounds, live or packed: (connection_id,
 * started_at, band, bound_seconds, changes, recorded_xid as syncRunRecords has it), one row per band and bound of a
 * run.
 */
export function changeStalenessRecords(bounds: HistoryBounds): Prisma.Sql {
  // The count reads the day's start times decompressed once (f below), not the stored array again.
  const from = packedRunsFrom(bounds, Prisma.sql`f.started_ms`);
  const live = Prisma.sql`
    SELECT r.connection_id, r.started_at, ${STALENESS_ENTRY}, r.recorded_xid
    FROM sync_run r ${EACH_STALENESS_ENTRY}
    WHERE r.outcome = 'succeeded' ${liveConnection(bounds, 'r')}`;
  return Prisma.sql`(${live}
    UNION ALL
    SELECT h.connection_id,
           (h.day::timestamp AT TIME ZONE 'UTC') + f.started_ms[u.run] * interval '1 millisecond',
           h.stale_band_names[u.band], u.bound_seconds, u.changes, NULL::bigint
    FROM sync_run_history h
    -- The day's start times decompressed once (a copy, kept by OFFSET 0 from being inlined): subscripting the
    -- stored array read and decompressed it from TOAST again for every element, a dozen buffer hits each.
    CROSS JOIN LATERAL (SELECT h.started_ms || '{}'::integer[] AS started_ms OFFSET 0) f
    ${from.join}
    CROSS JOIN LATERAL unnest(h.stale_run, h.stale_band, h.stale_bound_seconds, h.stale_changes)
      AS u(run, band, bound_seconds, changes)
    WHERE ${packedDayConditions(bounds, false)} AND u.run >= ${from.first}
  )`;
}
