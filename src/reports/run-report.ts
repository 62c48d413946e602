// One entry for every report: checks that the connection and event type asked for exist (so a typo is an
// error, not an empty report), then reads the report's rows through the report store and shapes them.
import type { ReportStore } from '../store/reports.js';
import { availabilityReport } from './availability-report.js';
import { bookingsReport } from './bookings-report.js';
import { ReportZoneError } from '../store/report-queries/report-zones.js';
import { ReportUsageError, type ReportQuery } from './report-query.js';
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

export async function runReport(reports: ReportStore, query: ReportQuery): Promise<ReportResult> {
  await assertSubjectsExist(reports, query);
  try {
    return await reportOf(reports, query);
  } catch (thrown: unknown) {
    // A zone no zone of the database keeps the time of: --tz with one it knows runs the report.
    throw thrown instanceof ReportZoneError ? new ReportUsageError(thrown.message) : thrown;
  }
}

function reportOf(reports: ReportStore, query: ReportQuery): Promise<ReportResult> {
  switch (query.report) {
    case 'availability':
      return availabilityReport(reports, query);
    case 'bookings':
      return bookingsReport(reports, query);
    case 'utilization':
      return utilizationReport(reports, query);
    case 'sync-health':
      return syncHealthReport(reports, query);
  }
}
