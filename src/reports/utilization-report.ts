// utilization: for past local days, the share of offered slots that were taken, per connection and event
// type.
//
// Semantics:
// - Past day: a local day before the local date of T (now, or --at), in the connection's zone or --tz.
// - Offered: distinct slots (connection, event type, start) of that day that slotfeed saw open before they
//   started (some row with first_seen_at < starts_at and first_seen_at ≤ T). A slot that was booked,
//   cancelled and reopened has several rows but is one offered slot.
// - Taken: an offered slot that was not open when it started: no row of it was still open at starts_at
//   (gone_at NULL or gone_at ≥ starts_at, as known at T). Like a booking, "taken" is what vanishing before
//   the start most likely means.
// - Share = taken ÷ offered, rounded to 4 decimals.
import { Prisma } from '../generated/prisma/client.js';
import type { ReportQuery } from './report-query.js';
import {
  at,
  connectionName,
  dayRangeFilter,
  localDay,
  scopeFilter,
  type ReportDb,
  eventTitleAsOf,
} from './report-sql.js';
import {
  dayString,
  numberOrNull,
  rangeWording,
  roundTo,
  zoneWording,
  type ReportResult,
  type ReportRow,
} from './report-result.js';

interface UtilizationRow {
  connection_id: string;
  connection: string;
  event_id: string;
  event: string | null;
  day: Date | string;
  offered: number;
  taken: number;
}

export async function utilizationReport(prisma: ReportDb, query: ReportQuery): Promise<ReportResult> {
  const startsAt = Prisma.sql`s.starts_at`;
  // One pass over the slot rows, grouped by local day. A slot (connection, event type, start) with several
  // rows (booked, then freed again) counts once: offered = its distinct starts, taken = those with no row open
  // at the start. Grouping by slot first and then by day took twice as long on a year of history (a million
  // groups, spilling to disk); see the Reports section of the README.
  const rows = await prisma.$queryRaw<UtilizationRow[]>(Prisma.sql`
    WITH zones AS (
      SELECT c.id, c.timezone, ${localDay(query, at(query))} AS today FROM connection c
    ), per_day AS (
      SELECT s.connection_id, s.upstream_event_id, ${localDay(query, startsAt)} AS day, c.today,
             COUNT(DISTINCT s.starts_at)::int AS offered,
             (COUNT(DISTINCT s.starts_at) FILTER (
               WHERE s.gone_at IS NULL OR s.gone_at > ${at(query)} OR s.gone_at >= s.starts_at))::int AS open_at_start
      FROM slot s JOIN zones c ON c.id = s.connection_id
      WHERE s.first_seen_at <= ${at(query)} AND s.first_seen_at < s.starts_at
        AND s.starts_at < ${at(query)}
        ${scopeFilter(query, 's')}
        ${dayRangeFilter(query, startsAt)}
      GROUP BY 1, 2, 3, 4
    )
    SELECT d.connection_id::text AS connection_id, ${connectionName} AS connection,
           d.upstream_event_id AS event_id, et.title AS event, d.day, d.offered,
           d.offered - d.open_at_start AS taken
    FROM per_day d
    JOIN connection c ON c.id = d.connection_id
    ${eventTitleAsOf(query, 'd')}
    WHERE d.day < d.today
    ORDER BY connection, d.connection_id, event NULLS LAST, d.upstream_event_id, d.day`);

  const out: ReportRow[] = rows.map((r) => ({
    connection_id: r.connection_id,
    connection: r.connection,
    event_id: r.event_id,
    event: r.event ?? r.event_id,
    day: dayString(r.day),
    offered: r.offered,
    taken: r.taken,
    share: r.offered === 0 ? null : roundTo(r.taken / r.offered, 4),
  }));
  const offered = out.reduce((n, r) => n + Number(r.offered), 0);
  const taken = out.reduce((n, r) => n + Number(r.taken), 0);
  return {
    report: 'utilization',
    title: 'Utilization',
    caption: `share of offered slots taken, past days before ${query.at.toISOString()}, ${zoneWording(query)}, ${rangeWording(query)}`,
    query,
    columns: [
      { key: 'connection_id', label: 'connection id', kind: 'text', inTable: false },
      { key: 'connection', label: 'connection', kind: 'text' },
      { key: 'event_id', label: 'event id', kind: 'text', inTable: false },
      { key: 'event', label: 'event type', kind: 'text' },
      { key: 'day', label: 'day', kind: 'text' },
      { key: 'offered', label: 'offered', kind: 'integer' },
      { key: 'taken', label: 'taken', kind: 'integer' },
      { key: 'share', label: 'taken share', kind: 'percent' },
    ],
    rows: out,
    summary: [
      { key: 'offered', label: 'offered', value: offered, kind: 'integer' },
      { key: 'taken', label: 'taken', value: taken, kind: 'integer' },
      {
        key: 'share',
        label: 'taken share',
        value: offered === 0 ? null : numberOrNull(taken / offered, 4),
        kind: 'percent',
      },
    ],
    emptyMessage: 'No past days with offered slots for this selection.',
  };
}
