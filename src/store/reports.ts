// The reports' door to Postgres: one named read per report, each returning plain rows (their SQL, and what
// each counts, in store/report-queries/), and the lookups a report page and a report's checks need. Shaping
// the rows into a report and rendering it are src/reports' job.
import type { PrismaClient } from '../generated/prisma/client.js';
import { requireConnection } from './connection-admin.js';
import { ConnectionNotFoundError } from './connections.js';
import { openCsvExport } from './report-queries/csv-export.js';
import { DEFAULT_EXPORT_PARTS, type ExportParts } from './report-queries/export-parts.js';
import type { CsvScope } from './report-queries/csv-rows.js';
import {
  availabilityRead,
  type AvailabilityFigure,
  type AvailabilityRow,
} from './report-queries/availability-rows.js';
import {
  bookingsByWeekdayHour,
  bookingsRows,
  type BookingsRows,
  type WeekdayHourCell,
} from './report-queries/bookings-rows.js';
import type { BookingsGrouping, ReportScope } from './report-queries/report-scope.js';
import { createBesideBudget, withReportSession, type BesideRead } from './report-queries/report-session.js';
import { postgresZoneNames, type ReportDb } from './report-queries/report-zones.js';
import { syncHealthRows, type SyncHealthRow } from './report-queries/sync-health-rows.js';
import {
  utilizationRead,
  type UtilizationFigure,
  type UtilizationRow,
} from './report-queries/utilization-rows.js';
import type { RowsRead } from './report-queries/first-rows.js';
import { poolBehind } from './pooled-rows.js';

export {
  BOOKINGS_GROUPINGS,
  type BookingsGrouping,
  type ReportScope,
} from './report-queries/report-scope.js';
export type { CsvScope } from './report-queries/csv-rows.js';
export type { AvailabilityRow } from './report-queries/availability-rows.js';
export type {
  BookingRow,
  BookingsRows,
  BookingTotals,
  PeriodRow,
  WeekdayHourCell,
} from './report-queries/bookings-rows.js';
export type { SyncHealthRow } from './report-queries/sync-health-rows.js';
export type { UtilizationRow } from './report-queries/utilization-rows.js';

/** A connection a report can be narrowed to, as the report pages offer them. */
export interface ReportConnectionChoice {
  id: string;
  email: string | null;
  displayName: string | null;
  /** The zone its report days and hours are counted in unless one is asked for (null: UTC, never synced). */
  timezone: string | null;
}

/** How many connections the report pages offer to narrow a report to. */
const REPORT_CONNECTION_CHOICES = 500;

export interface ReportStore {
  /** Each report's rows, read in one read-only session with room to sort a big history in memory. */
  /** Every row; given `firstRows`, only the first so many, with each day's totals over all of them (first-rows.ts). */
  availability(
    scope: ReportScope & { firstRows?: number },
  ): Promise<RowsRead<AvailabilityRow, AvailabilityFigure>>;
  /** Only the first `firstRows` of its rows, where given, with how many it has (BookingsRows.counted). */
  bookings(scope: ReportScope & { by: BookingsGrouping; firstRows?: number }): Promise<BookingsRows>;
  /** As availability. */
  utilization(
    scope: ReportScope & { firstRows?: number },
  ): Promise<RowsRead<UtilizationRow, UtilizationFigure>>;
  syncHealth(scope: ReportScope): Promise<SyncHealthRow[]>;
  /**
   * The report as CSV streamed from Postgres (report-queries/csv-export.ts), or undefined when it is written
   * from its rows (its rows few, or read apart from Prisma's pool).
   */
  csv(scope: CsvScope): Promise<AsyncIterable<Buffer> | undefined>;
  /** Bookings per weekday and hour they start (the bookings page's heat map), outside a report session. */
  bookingsByWeekdayHour(scope: ReportScope): Promise<WeekdayHourCell[]>;
  hasConnection(connectionId: string): Promise<boolean>;
  /** Whether the event type was ever seen, on that connection when one is given. */
  hasEventType(eventId: string, connectionId?: string): Promise<boolean>;
  /** The connections a report page offers, by e-mail, at most REPORT_CONNECTION_CHOICES. */
  connectionChoices(): Promise<ReportConnectionChoice[]>;
}

/**
 * `exportParts`: how a CSV export over many connections is read in parts at once (export-parts.ts), and availability's
 * day totals for a page of its first rows; `besideBudget`:
 * the second connections for reads beside a report's others and for an export's later parts, shared by this store's
 * reports (one pool). The defaults, or a test's.
 */
export function createReportStore(
  prisma: PrismaClient,
  exportParts: Omit<ExportParts, 'budget'> = DEFAULT_EXPORT_PARTS,
  besideBudget = createBesideBudget(),
): ReportStore {
  // Read once for this store's reports, not once a report (report-zones.ts).
  const knownZones = postgresZoneNames();
  const session = <S extends ReportScope, T>(
    scope: S,
    work: (db: ReportDb, zoned: S, beside: BesideRead) => Promise<T>,
  ) => withReportSession(prisma, knownZones, scope, work, besideBudget);
  return {
    availability: (scope) =>
      session(scope, (db, zoned, beside) => availabilityRead(db, zoned, beside, exportParts)),
    bookings: (scope) => session(scope, bookingsRows),
    utilization: (scope) => session(scope, utilizationRead),
    syncHealth: (scope) => session(scope, syncHealthRows),
    bookingsByWeekdayHour: (scope) => session(scope, bookingsByWeekdayHour),
    async csv(scope) {
      const pool = poolBehind(prisma);
      return pool === undefined
        ? undefined
        : openCsvExport(pool, knownZones, scope, { ...exportParts, budget: besideBudget });
    },

    async hasConnection(connectionId) {
      try {
        await requireConnection(prisma, connectionId);
        return true;
      } catch (thrown: unknown) {
        if (thrown instanceof ConnectionNotFoundError) return false;
        throw thrown;
      }
    },

    async hasEventType(eventId, connectionId) {
      const found = await prisma.eventType.findFirst({
        where: { upstreamEventId: eventId, ...(connectionId === undefined ? {} : { connectionId }) },
        select: { id: true },
      });
      return found !== null;
    },

    connectionChoices: () =>
      prisma.connection.findMany({
        orderBy: [{ email: 'asc' }, { id: 'asc' }],
        take: REPORT_CONNECTION_CHOICES,
        select: { id: true, email: true, displayName: true, timezone: true },
      }),
  };
}
