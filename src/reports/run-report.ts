// One entry for every report: checks that the connection and event type asked for exist (so a typo is an
// error, not an empty report), then reads the report's rows through the report store and shapes them.
import type { ReportStore } from '../store/reports.js';
import { availabilityReport } from './availability-report.js';
import { bookingsReport } from './bookings-report.js';
import { ReportZoneError } from '../store/report-queries/report-zones.js';
import { ReportUsageError, type ReportQuery } from './report-query.js';
import { reportAsCsv } from './report-format.js';
import type { ReportResult } from './report-result.js';
import { syncHealthReport } from './sync-health-report.js';
import { utilizationReport } from './utilization-report.js';

/** A connection or event type the report was asked about does not exist: the message says what to do. */
export class ReportSubjectNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReportSubjectNotFoundError';
  }
}

async function assertSubjectsExist(reports: ReportStore, query: ReportQuery): Promise<void> {
  if (query.connectionId !== undefined && !(await reports.hasConnection(query.connectionId))) {
    throw new ReportSubjectNotFoundError(
      `no connection with id ${query.connectionId}: \`slotfeed connections list\` shows the ids`,
    );
  }
  if (query.eventId !== undefined && !(await reports.hasEventType(query.eventId, query.connectionId))) {
    throw new ReportSubjectNotFoundError(
      `no event type ${query.eventId}${query.connectionId ? ` for connection ${query.connectionId}` : ''}: ` +
        '`slotfeed connections show <id>` lists a connection’s event types',
    );
  }
}

/** Runs `work` once the query's subjects are found, a zone Postgres lacks and no stand-in keeps read as a usage error. */
async function checked<T>(reports: ReportStore, query: ReportQuery, work: () => Promise<T>): Promise<T> {
  await assertSubjectsExist(reports, query);
  try {
    return await work();
  } catch (thrown: unknown) {
    // A zone no zone of the database keeps the time of: --tz with one it knows runs the report.
    throw thrown instanceof ReportZoneError ? new ReportUsageError(thrown.message) : thrown;
  }
}

/**
 * The report's rows, shaped. `firstRows`: as many rows as will be shown (the admin page's table). A report whose
 * summary does not need its every row read in Node (availability, utilization, bookings by booking, day or week)
 * then reads only those, and says how many it has (ReportResult.rowCount); sync-health reads every row all the same.
 */
export async function runReport(
  reports: ReportStore,
  query: ReportQuery,
  { firstRows }: { firstRows?: number } = {},
): Promise<ReportResult> {
  return checked(reports, query, () => reportOf(reports, query, firstRows));
}

/**
 * The report as CSV, in chunks: streamed from Postgres where the report has a streamed form (its rows grow with
 * connections × days: store/report-queries/csv-rows.ts), else formatted from its rows (reportAsCsv). The same
 * text either way. Errors in the query come before the first chunk; a failure while streaming ends the chunks.
 */
export async function runReportCsv(
  reports: ReportStore,
  query: ReportQuery,
): Promise<AsyncIterable<Buffer | string>> {
  return checked(reports, query, async () => {
    const streamed = await reports.csv(query);
    if (streamed !== undefined) return streamed;
    const text = reportAsCsv(await reportOf(reports, query));
    return (async function* () {
      yield text;
    })();
  });
}

function reportOf(reports: ReportStore, query: ReportQuery, firstRows?: number): Promise<ReportResult> {
  switch (query.report) {
    case 'availability':
      return availabilityReport(reports, query, firstRows);
    case 'bookings':
      return bookingsReport(reports, query, firstRows);
    case 'utilization':
      return utilizationReport(reports, query, firstRows);
    case 'sync-health':
      return syncHealthReport(reports, query);
  }
}
