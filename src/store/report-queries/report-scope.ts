// What a report's queries read: which connection and event type, which local days, as of which instant, in
// which zone. The report layer's ReportQuery (reports/report-query.ts) extends it with what only it needs.

export const REPORT_NAMES = ['availability', 'bookings', 'utilization', 'sync-health'] as const;
export type ReportName = (typeof REPORT_NAMES)[number];

export const BOOKINGS_GROUPINGS = ['day', 'week', 'weekday-hour', 'booking'] as const;
export type BookingsGrouping = (typeof BOOKINGS_GROUPINGS)[number];

export interface ReportScope {
  connectionId?: string;
  /**
   * Only these connections: a batch the retention run stores the days of (store/report-days.ts), read as one
   * statement rather than one a connection. Reports do not take it.
   */
  connectionBatch?: readonly string[];
  eventId?: string;
  /** Inclusive local days 'YYYY-MM-DD' (in each connection's zone, or `timezone`). */
  from?: string;
  to?: string;
  /** The instant the history is read as of: rows first seen later do not exist yet, later closes not yet. */
  at: Date;
  /** IANA zone that overrides each connection's own zone for days, weeks and hours. */
  timezone?: string;
  /**
   * Connection zones this Postgres does not know, each with the name of one it knows that keeps the same time
   * (report-zones.ts, withPostgresZones): what the queries name instead.
   */
  postgresZones?: ReadonlyMap<string, string>;
  /**
   * The earliest instant a day after a connection's stored report days can start, over the scope's connections
   * with days stored in their zone, as Postgres writes a timestamptz (null: none has): looked up in the report's
   * snapshot before its statement is built (stored-days.ts, withUnstoredFrom: utilization and bookings by day and
   * week), so that Postgres plans the read of the days after them with the value itself. Undefined: the statement
   * works it out.
   */
  unstoredFrom?: string | null;
}
