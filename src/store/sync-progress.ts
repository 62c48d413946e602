// How far some connections' syncs have come, for one who waits on them (the demo: its accounts' first syncs,
// each round of its recorded history, and the bookings those syncs inferred).
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { pooledRows } from './pooled-rows.js';

export interface ConnectionSyncState {
  id: string;
  status: 'active' | 'needs_reauth' | 'disabled';
  lastSyncAt: Date | null;
  /** Never 'superseded' or 'interrupted': such runs leave the connection as the last finished run left it. */
  lastSyncOutcome: 'succeeded' | 'failed' | 'superseded' | 'interrupted' | null;
  lastSyncError: string | null;
}

export interface SyncProgressStore {
  /** How many connections the database holds (none: a fresh one). */
  connectionCount(): Promise<number>;
  /**
   * The connection an upstream account's grant stored, found by the account's id or e-mail address (the id is
   * the address when the token names no subject); the latest updated if both find one. Undefined when none.
   */
  connectionOfAccount(account: { upstreamUserId: string; email: string }): Promise<string | undefined>;
  /** The sync state of each of these connections that exists. */
  syncStates(connectionIds: readonly string[]): Promise<ConnectionSyncState[]>;
  /** The connection's open slots now. */
  openSlots(connectionId: string): Promise<number>;
  /** How many of these connections finished a sync at or after `at`. */
  syncedSince(connectionIds: readonly string[], at: Date): Promise<number>;
  /** The bookings the syncs of these connections inferred. */
  inferredBookings(connectionIds: readonly string[]): Promise<number>;
}

export function createSyncProgressStore(prisma: PrismaClient): SyncProgressStore {
  return {
    connectionCount: () => prisma.connection.count(),

    async connectionOfAccount(account) {
      const row = await prisma.connection.findFirst({
        where: { OR: [{ upstreamUserId: account.upstreamUserId }, { email: account.email }] },
        orderBy: { updatedAt: 'desc' },
        select: { id: true },
      });
      return row?.id;
    },

    syncStates: (connectionIds) =>
      prisma.connection.findMany({
        where: { id: { in: [...connectionIds] } },
        select: { id: true, status: true, lastSyncAt: true, lastSyncOutcome: true, lastSyncError: true },
      }),

    openSlots: (connectionId) => prisma.slot.count({ where: { connectionId, goneAt: null } }),

    // Asked every 20 ms while a round of the demo's history runs: from the pool, past Prisma (pooled-rows.ts).
    async syncedSince(connectionIds, at) {
      const [row] = await pooledRows<{ synced: number }>(
        prisma,
        Prisma.sql`
          SELECT count(*)::int AS synced FROM connection
          WHERE id = ANY(${[...connectionIds]}::uuid[]) AND last_sync_at >= ${at}`,
      );
      return row?.synced ?? 0;
    },

    inferredBookings: (connectionIds) =>
      prisma.booking.count({ where: { connectionId: { in: [...connectionIds] } } }),
  };
}
