// One connection as its administrator's page shows it (src/web/admin/admin-connection-page.ts): its recent sync
// runs, the upstream calls they made per endpoint, and how many slots it had open on each of the last days.
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { slotRecords } from './report-queries/history-records.js';

export interface RecentRun {
  id: string;
  startedAt: Date;
  finishedAt: Date | null;
  outcome: string;
  attempt: number;
  upstreamCalls: number;
  /** The cadence bands the run pulled (empty: none, or a run from before bands). */
  bands: string[];
  slotsOpened: number;
  slotsClosed: number;
  errorCode: string | null;
  errorMessage: string | null;
}

export interface ConnectionDetailStore {
  /** The connection's latest runs, newest first, `offset` of them skipped (a page further back). */
  recentRuns(connectionId: string, limit?: number, offset?: number): Promise<RecentRun[]>;
  /** How many runs the connection has had. */
  runCount(connectionId: string): Promise<number>;
  /** Upstream calls per endpoint made by the runs that started at or after `since`, most called first. */
  callsByEndpointSince(connectionId: string, since: Date): Promise<{ endpoint: string; calls: number }[]>;
  /**
   * Slots open at `now` and at the same time on each of the `days - 1` days before, oldest first: a slot is
   * open at t when it was first seen at or before t and had not gone by t. Null before the connection's first
   * successful sync: nothing was known then, which is not the same as nothing open.
   */
  openSlotsByDay(connectionId: string, now: Date, days: number): Promise<{ at: Date; open: number | null }[]>;
}

export function createConnectionDetailStore(prisma: PrismaClient): ConnectionDetailStore {
  return {
    recentRuns: (connectionId, limit, offset) => recentRuns(prisma, connectionId, limit, offset),
    runCount: (connectionId) => prisma.syncRun.count({ where: { connectionId } }),
    callsByEndpointSince: (connectionId, since) => callsByEndpointSince(prisma, connectionId, since),
    openSlotsByDay: (connectionId, now, days) => openSlotsByDay(prisma, connectionId, now, days),
  };
}

async function recentRuns(
  prisma: PrismaClient,
  connectionId: string,
  limit = 50,
  offset = 0,
): Promise<RecentRun[]> {
  return prisma.syncRun.findMany({
    where: { connectionId },
    orderBy: [{ startedAt: 'desc' }, { id: 'desc' }],
    take: limit,
    skip: offset,
    select: {
      id: true,
      startedAt: true,
      finishedAt: true,
      outcome: true,
      attempt: true,
      upstreamCalls: true,
      bands: true,
      slotsOpened: true,
      slotsClosed: true,
      errorCode: true,
      errorMessage: true,
    },
  });
}

async function callsByEndpointSince(
  prisma: PrismaClient,
  connectionId: string,
  since: Date,
): Promise<{ endpoint: string; calls: number }[]> {
  // Runs of days that are over are packed with their day's calls summed (store/history-compaction.ts): a packed
  // day counts whole when any of it is after `since` (exact from a UTC midnight; up to a day more otherwise).
  return prisma.$queryRaw<{ endpoint: string; calls: number }[]>`
    SELECT e.key AS endpoint, sum(e.value::bigint)::int AS calls
    FROM (
      SELECT r.calls_by_endpoint FROM sync_run r
      WHERE r.connection_id = ${connectionId}::uuid AND r.started_at >= ${since}
      UNION ALL
      SELECT h.calls_by_endpoint FROM sync_run_history h
      WHERE h.connection_id = ${connectionId}::uuid AND ((h.day + 1)::timestamp AT TIME ZONE 'UTC') > ${since}
    ) r, jsonb_each_text(r.calls_by_endpoint) e
    GROUP BY e.key
    ORDER BY calls DESC, endpoint`;
}

async function openSlotsByDay(
  prisma: PrismaClient,
  connectionId: string,
  now: Date,
  days: number,
): Promise<{ at: Date; open: number | null }[]> {
  return prisma.$queryRaw<{ at: Date; open: number | null }[]>`
    SELECT t AS at, CASE WHEN c.first_synced_at IS NULL OR c.first_synced_at > t THEN NULL ELSE (
      SELECT count(*) FROM ${slotRecords({
        connectionId,
        seenBy: Prisma.sql`${now}::timestamptz`,
        goneAfter: Prisma.sql`${now}::timestamptz - make_interval(days => ${days})`,
      })} s
      WHERE s.connection_id = c.id AND s.first_seen_at <= t
        AND (s.gone_at IS NULL OR s.gone_at > t)
    )::int END AS open
    FROM connection c,
      generate_series(${now}::timestamptz - make_interval(days => ${days - 1}), ${now}::timestamptz, interval '1 day') t
    WHERE c.id = ${connectionId}::uuid
    ORDER BY t`;
}
