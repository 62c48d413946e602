// What a sync attempt writes and reads of its connection's snapshot, as one object the sync pipeline is given
// (SyncDeps.snapshots): the pull's ticket, the event types stored as enabled, the commit of a successful pull,
// and the run rows of an interrupted or failed one. The SQL and the commit's transaction are snapshots.ts's.
import type { PrismaClient } from '../generated/prisma/client.js';
import {
  beginPull,
  commitSuccessfulSync,
  enabledEventTypeIds,
  recordFailedSync,
  recordInterruptedSync,
  type FailedSync,
  type RunRecord,
  type SnapshotChanges,
  type SuccessfulSync,
} from './snapshots.js';

export interface SnapshotStore {
  /** A ticket for a pull about to start (beginPull): commits are ordered by it. */
  beginPull(connectionId: string): Promise<number>;
  /** The upstream ids of the connection's event types stored as enabled now. */
  enabledEventTypeIds(connectionId: string): Promise<Set<string>>;
  /** Commits what a successful pull saw, in one transaction (commitSuccessfulSync). */
  commit(sync: SuccessfulSync): Promise<SnapshotChanges>;
  /** Writes a failed attempt's run row and the connection's last-sync status. */
  recordFailed(failure: FailedSync): Promise<void>;
  /** Writes the run row of an attempt a shutdown cut short. */
  recordInterrupted(interrupted: { connectionId: string; run: RunRecord; now: Date }): Promise<void>;
}

export function createSnapshotStore(prisma: PrismaClient): SnapshotStore {
  return {
    beginPull: (connectionId) => beginPull(prisma, connectionId),
    enabledEventTypeIds: (connectionId) => enabledEventTypeIds(prisma, connectionId),
    commit: (sync) => commitSuccessfulSync(prisma, sync),
    recordFailed: (failure) => recordFailedSync(prisma, failure),
    recordInterrupted: (interrupted) => recordInterruptedSync(prisma, interrupted),
  };
}
