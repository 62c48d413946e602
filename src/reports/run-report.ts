// One entry for every report: checks that the connection and event type asked for exist (so a typo is an
// error, not an empty report), then runs the report's query.
import type { PrismaClient } from '../generated/prisma/client.js';
import { requireConnection } from '../store/connection-admin.js';
import { ConnectionNotFoundError } from '../store/connections.js';
import { availabilityReport } from './availability-report.js';
import { bookingsReport } from './bookings-report.js';
import type { ReportQuery } from './report-query.js';
import type { ReportResult } from './report-result.js';
import { syncHealthReport } from './sync-health-report.js';
import { utilizationReport } from './utilization-report.js';
import { withReportSession } from './report-sql.js';

/** A connection or event type the report was asked about does not exist: the message says what to do. */
export class ReportSubjectNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReportSubjectNotFoundError';
  }
}

async function assertSubjectsExist(prisma: PrismaClient, query: ReportQuery): Promise<void> {
  if (query.connectionId !== undefined) {
    try {
      await requireConnection(prisma, query.connectionId);
    } catch (thrown: unknown) {
      if (!(thrown instanceof ConnectionNotFoundError)) throw thrown;
      throw new ReportSubjectNotFoundError(
        `no connection with id ${query.connectionId}: \`slotfeed connections list\` shows the ids`,
      );
    }
  }
  if (query.eventId !== undefined) {
    const found = await prisma.eventType.findFirst({
      where: {
        upstreamEventId: query.eventId,
        ...(query.connectionId === undefined ? {} : { connectionId: query.connectionId }),
      },
      select: { id: true },
    });
    if (!found) {
      throw new ReportSubjectNotFoundError(
        `no event type ${query.eventId}${query.connectionId ? ` for connection ${query.connectionId}` : ''}: ` +
          '`slotfeed connections show <id>` lists a connection’s event types',
      );
    }
  }
}

export async function runReport(prisma: PrismaClient, query: ReportQuery): Promise<ReportResult> {
  await assertSubjectsExist(prisma, query);
  return withReportSession(prisma, (db) => {
    switch (query.report) {
      case 'availability':
        return availabilityReport(db, query);
      case 'bookings':
        return bookingsReport(db, query);
      case 'utilization':
        return utilizationReport(db, query);
      case 'sync-health':
        return syncHealthReport(db, query);
    }
  });
}
