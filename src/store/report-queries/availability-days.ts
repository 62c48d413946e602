// Availability days stored once they are over (availability_day and availability_day_closing, migration
// 20261202100000_availability_days): what the availability report reads of a day at any instant T, without a row per
// slot.
//
// A slot counts as free at T when it was first seen by T and neither closed nor started by then
// (availability-rows.ts): seen ≤ T < closed, where `closed` is the earlier of its close and its start. So the free
// slots of a connection's event type and local day at T are the slots seen by T less those closed by T (a slot
// closed by T was seen before it closed, or it was never free and is left out of both), and their length the same
// difference of sums. The retention run keeps, per connection, event type and local day, both lists as distinct
// instants in ascending order with running counts and lengths, and a report reads the figures at T off them with
// width_bucket (a binary search: the number of instants at or before T).
//
// A slot that stopped being free on an earlier local day (taken before its day began) is in the short
// closed_early list; those that stopped on the day itself (most at their start) in the long closed list, kept in a
// table of its own, which only T's own day reads: for a later day, everything closed by T closed before it began.
import { Prisma } from '../../generated/prisma/client.js';
import { slotRecords } from './history-records.js';
import type { ReportScope } from './report-scope.js';
import {
  at,
  connectionFilter,
  connectionsInOrder,
  dayColumnInRange,
  eventTitlesAt,
  localDay,
  takenFromExcluded,
  WORKED_OUT_ONCE,
  type ReportDb,
} from './report-sql.js';
import { STORED_ZONE } from './stored-days.js';

/** A stored day's lists: each an instant list with its running slots and ms (listColumns). */
type AvailabilityList = 'seen' | 'closed_early' | 'closed';

const listColumns = (list: AvailabilityList) => [`${list}_at`, `${list}_slots`, `${list}_ms`] as const;

/** Each table's columns after the three of its key (connection, event type and day): the lists it holds. */
export const AVAILABILITY_TABLES = {
  availability_day: [...listColumns('seen'), ...listColumns('closed_early')],
  availability_day_closing: listColumns('closed'),
} as const;

/**
 * Whether an availability_day row (alias a) is read from its covering index (migration
 * 20261202400000_availability_days_covered, whose predicate this is, word for word): most days hold a few sightings, but
 * an index entry must fit a third of a page (2,704 bytes), and a day's lists have no bound of their own. At most 64
 * instants in the two lists (20 bytes each with their counts and lengths) and an event type id of at most 512 bytes
 * keep an entry under 2,100 bytes; the other days are read from the table.
 */
export const LISTS_INDEXED = Prisma.raw(
  '(cardinality(a.seen_at) + cardinality(a.closed_early_at) <= 64 AND octet_length(a.upstream_event_id) <= 512)',
);

/**
 * A sum of slot lengths in milliseconds as the report's free minutes: one expression for stored and computed. As
 * float8, the quotient correctly rounded (a sum is an integer well below 2⁵³); through numeric it cost 0.4 s of 870,000
 * rows. The report shows two decimals, and both round alike: where the rounding could tip (a half-hundredth of a
 * minute, 300 ms times an odd number) the quotient is a short decimal that both give as the same nearest double, and
 * elsewhere it lies a millisecond's 1/60,000 of a minute or more from such a point, far past either's last digit.
 */
export const minutesOfMs = (ms: Prisma.Sql): Prisma.Sql => Prisma.sql`(${ms})::float8 / 60000`;

/** A slot row's (alias s) length in milliseconds. */
export const slotLengthMs = Prisma.sql`(EXTRACT(EPOCH FROM (s.ends_at - s.starts_at)) * 1000)::bigint`;

/**
 * The availability days of the query's connections (its batch) to store through `through` (a date over alias `c`, a day
 * over by `now`), after each one's availability_through (all its days where none are stored): (connection_id,
 * upstream_event_id, day, and every list's columns). Only slots that were ever free count (first seen before they closed or
 * started); a day none of whose slots was has no row.
 */
export function availabilityDaysToStore(query: ReportScope, through: Prisma.Sql, now: Date): Prisma.Sql {
  const startsAt = Prisma.sql`s.starts_at`;
  const closed = Prisma.sql`LEAST(s.starts_at, s.gone_at)`;
  // The packed days read: from the earliest day after a connection's stored ones (a local day starts no earlier
  // than the UTC day before its date), or all of them for a connection with none stored yet.
  const startsFrom = Prisma.sql`(
    SELECT CASE WHEN bool_or(z.stored_through IS NULL) THEN '-infinity'::timestamptz
                ELSE MIN(z.stored_through)::timestamp AT TIME ZONE 'UTC' END
    FROM zones z)`;
  // Nor the slots ahead, up to the horizon: a day stored is over by `now`, and its slots started within two UTC days.
  const startsUntil = Prisma.sql`${new Date(now.getTime() + 2 * 86_400_000)}::timestamptz`;
  const slots = slotRecords({
    connectionIds: Prisma.sql`ARRAY(SELECT id FROM zones)`,
    startsFrom,
    startsUntil,
  });
  const list = (name: AvailabilityList, kind: number) => {
    const [instants, slotCounts, ms] = listColumns(name).map((column) => Prisma.raw(column));
    return Prisma.sql`
      COALESCE(array_agg(r.at ORDER BY r.at) FILTER (WHERE r.kind = ${kind}), '{}') AS ${instants},
      COALESCE(array_agg(r.slots ORDER BY r.at) FILTER (WHERE r.kind = ${kind}), '{}') AS ${slotCounts},
      COALESCE(array_agg(r.ms ORDER BY r.at) FILTER (WHERE r.kind = ${kind}), '{}') AS ${ms}`;
  };
  return Prisma.sql`
    WITH zones AS MATERIALIZED (
      SELECT c.id, s.availability_through AS stored_through
      FROM connection c
      LEFT JOIN report_days_stored s ON s.connection_id = c.id AND s.zone = ${STORED_ZONE}
      WHERE TRUE ${connectionFilter(query, Prisma.sql`c.id`)}
    ), ever_free AS (
      SELECT s.connection_id, s.upstream_event_id, ${localDay(query, startsAt)} AS day,
             s.first_seen_at AS seen, ${closed} AS closed,
             ${localDay(query, closed)} < ${localDay(query, startsAt)} AS early, ${slotLengthMs} AS ms
      FROM ${slots} s JOIN zones z ON z.id = s.connection_id JOIN connection c ON c.id = s.connection_id
      WHERE s.first_seen_at < ${closed} AND s.starts_at >= ${startsFrom} AND s.starts_at < ${startsUntil}
        AND (z.stored_through IS NULL OR ${localDay(query, startsAt)} > z.stored_through)
        AND ${localDay(query, startsAt)} <= ${through}
    ), steps AS (
      SELECT connection_id, upstream_event_id, day, 0 AS kind, seen AS at, COUNT(*) AS slots, SUM(ms) AS ms
      FROM ever_free GROUP BY 1, 2, 3, 5
      UNION ALL
      SELECT connection_id, upstream_event_id, day, CASE WHEN early THEN 1 ELSE 2 END, closed, COUNT(*), SUM(ms)
      FROM ever_free GROUP BY 1, 2, 3, 4, 5
    ), running AS (
      SELECT connection_id, upstream_event_id, day, kind, at,
             (SUM(slots) OVER w)::int AS slots, (SUM(ms) OVER w)::bigint AS ms
      FROM steps
      WINDOW w AS (PARTITION BY connection_id, upstream_event_id, day, kind ORDER BY at)
    )
    SELECT r.connection_id, r.upstream_event_id, r.day,
           ${list('seen', 0)}, ${list('closed_early', 1)}, ${list('closed', 2)}
    FROM running r
    GROUP BY 1, 2, 3`;
}

/** How storedAvailabilityInOrder reads the stored days. */
export interface StoredAvailabilityRead {
  /** In the report's order; false: in no order (the sorts were a third of a sum's time). Default true. */
  inOrder?: boolean;
  /** With each event type's title at T; false: `event` null, for a sum that shows none. Default true. */
  titled?: boolean;
}

/**
 * The stored availability of the query's connections at T, for their days from T's on (up to their
 * availability_through, where they are stored in the connection's zone): (connection_id, connection, event_id, event,
 * day, free_slots, free_minutes), only days with a slot free at T, in the report's order (AVAILABILITY_IN_ORDER).
 * Read in that order, so that the sort Postgres keeps above them finds each connection's rows sorted already: connection
 * by connection, its event types by their titles at T (report_days_stored.availability_event_ids, which a trigger
 * keeps: migration 20261202500000_availability_event_ids), and each event type's
 * days from T's to the last whose slots could have been seen by T, from the key (connection, event type, day). Read by
 * day instead, the rows came in day order and were sorted by title: a fifth of the report's time for 870,000 rows.
 * Each day's lists are read from the index that holds them where they fit one (LISTS_INDEXED): a connection's days
 * are then a few adjacent index pages, where in the table each was a page of its own. A statement that sums them by day
 * (first-rows.ts) reads them in no order and without titles (StoredAvailabilityRead).
 */
export function storedAvailabilityInOrder(
  query: ReportScope,
  { inOrder = true, titled = true }: StoredAvailabilityRead = {},
): Prisma.Sql {
  const t = at(query);
  const orderBy = (order: string) => Prisma.raw(inOrder ? `ORDER BY ${order}` : '');
  const figure = (alias: string, list: AvailabilityList, unit: 'slots' | 'ms') =>
    Prisma.sql`COALESCE(${Prisma.raw(`${alias}.${list}_${unit}`)}[width_bucket(${t}, ${Prisma.raw(`${alias}.${list}_at`)})], 0)`;
  // T's own day reads its closings on the day (a later day has none by T), a lookup only for that day.
  const free = (unit: 'slots' | 'ms') =>
    Prisma.sql`${figure('a', 'seen', unit)} - ${figure('a', 'closed_early', unit)} - COALESCE(k.${Prisma.raw(unit)}, 0)`;
  const days = Prisma.raw(['day', ...AVAILABILITY_TABLES.availability_day].join(', '));
  const dayRange = Prisma.sql`a.connection_id = o.id AND a.upstream_event_id = ev.event_id
    AND a.day >= d.t_day AND a.day <= d.last_day
    ${Prisma.join([Prisma.empty, ...dayColumnInRange(query, Prisma.sql`a.day`)], ' AND ')}`;
  return Prisma.sql`
    SELECT o.id AS connection_id, o.connection, ev.event_id, ev.event, f.day, f.free_slots,
           ${minutesOfMs(Prisma.sql`f.free_ms`)} AS free_minutes
    FROM (SELECT * FROM ${connectionsInOrder(query)} o ${orderBy('o.connection, o.id')}) o
    CROSS JOIN LATERAL (
      -- No slot of a day more than availability_ahead days after T's was seen by T.
      SELECT ${localDay(query, t)} AS t_day,
             CASE WHEN s.zone = ${STORED_ZONE} AND s.availability_through IS NOT NULL
                  THEN LEAST(s.availability_through, ${localDay(query, t)} + s.availability_ahead) END AS last_day,
             s.availability_event_ids AS event_ids
      FROM report_days_stored s JOIN connection c ON c.id = s.connection_id
      WHERE s.connection_id = o.id
      ${WORKED_OUT_ONCE}
    ) d
    CROSS JOIN LATERAL (
      -- The event types it has days of, in the report's order.
      SELECT ids.id AS event_id, ${titled ? Prisma.sql`et.title` : Prisma.sql`NULL::text`} AS event
      FROM unnest(d.event_ids) ids(id)
      ${
        titled
          ? Prisma.sql`LEFT JOIN (${eventTitlesAt(query, Prisma.sql`AND e.connection_id = o.id`)}) et
              ON et.upstream_event_id = ids.id`
          : Prisma.empty
      }
      WHERE d.last_day IS NOT NULL
      ${orderBy(titled ? 'et.title NULLS LAST, ids.id' : 'ids.id')}
    ) ev
    CROSS JOIN LATERAL (
      SELECT a.day, (${free('slots')})::int AS free_slots, ${free('ms')} AS free_ms
      FROM (
        -- The days whose lists fit the covering index, read from it alone in day order, then any others from the
        -- table: the sort above puts those in place (and, with none, finds every connection's rows in order).
        SELECT ${days} FROM availability_day a WHERE ${dayRange} AND ${LISTS_INDEXED}
        UNION ALL
        SELECT ${days} FROM availability_day a WHERE ${dayRange} AND NOT ${LISTS_INDEXED}
      ) a
      LEFT JOIN LATERAL (
        SELECT ${figure('k', 'closed', 'slots')} AS slots, ${figure('k', 'closed', 'ms')} AS ms
        FROM availability_day_closing k
        WHERE a.day = d.t_day
          AND k.connection_id = o.id AND k.day = a.day AND k.upstream_event_id = ev.event_id
        -- Kept a subquery, so that the day's test gates the lookup: joined, every day was looked up.
        ${WORKED_OUT_ONCE}
      ) k ON TRUE
      ${WORKED_OUT_ONCE}
    ) f
    WHERE f.free_slots > 0
    ${orderBy('o.connection, o.id, ev.event NULLS LAST, ev.event_id, f.day')}`;
}

/**
 * Stores the availability days (availabilityDaysToStore) of `query`'s batch, claimed and marked stored in their zone,
 * after each one's availability_through and up to `through` (over alias `c`), and marks how far they go and how far
 * ahead of its day a slot of them was first seen. The number of rows stored, a day and event type each.
 */
export async function storeAvailabilityDays(
  tx: ReportDb,
  query: ReportScope,
  through: Prisma.Sql,
  now: Date,
): Promise<number> {
  const key = ['connection_id', 'day', 'upstream_event_id'];
  const insert = (table: keyof typeof AVAILABILITY_TABLES, returning: Prisma.Sql) => {
    const lists = AVAILABILITY_TABLES[table];
    const columns = [...key, ...lists];
    return Prisma.sql`
      INSERT INTO ${Prisma.raw(table)} (${Prisma.raw(columns.join(', '))})
      SELECT ${Prisma.raw(columns.map((column) => `d.${column}`).join(', '))} FROM days d
      ${table === 'availability_day_closing' ? Prisma.sql`WHERE cardinality(d.closed_at) > 0` : Prisma.empty}
      ON CONFLICT (${Prisma.raw(key.join(', '))}) DO UPDATE
        SET ${takenFromExcluded(lists)}
      ${returning}`;
  };
  const [done] = await tx.$queryRaw<{ rows: number }[]>(Prisma.sql`
    WITH days AS MATERIALIZED (${availabilityDaysToStore(query, through, now)}),
    stored AS (${insert('availability_day', Prisma.sql`RETURNING connection_id, day, seen_at[1] AS first_seen`)}),
    closings AS (${insert('availability_day_closing', Prisma.empty)}),
    -- A day stored again (its days counted again from an earlier one) with no closings on it keeps none.
    cleared AS (
      DELETE FROM availability_day_closing k USING days d
      WHERE k.connection_id = d.connection_id AND k.day = d.day AND k.upstream_event_id = d.upstream_event_id
        AND cardinality(d.closed_at) = 0
    ),
    ahead AS (
      SELECT d.connection_id, MAX(d.day - ${localDay(query, Prisma.sql`d.first_seen`)}) AS days
      FROM stored d JOIN connection c ON c.id = d.connection_id GROUP BY 1
    ), marked AS (
      UPDATE report_days_stored s
      SET availability_through = GREATEST(s.availability_through, c.through),
          availability_ahead = GREATEST(s.availability_ahead, (SELECT a.days FROM ahead a WHERE a.connection_id = s.connection_id))
      FROM (SELECT c.id, ${through} AS through FROM connection c
            WHERE TRUE ${connectionFilter(query, Prisma.sql`c.id`)}) c
      WHERE s.connection_id = c.id
    )
    SELECT (SELECT COUNT(*) FROM stored)::int AS rows`);
  return done?.rows ?? 0;
}
