// What a sync attempt writes and reads of its connection's snapshot, as one object the sync pipeline is given
// (SyncDeps.snapshots): the pull's ticket, what a scheduled pull plans by (pull-basis.ts), the commit of a
// successful pull, and the run rows of an interrupted or failed one. The SQL and the commit's transaction are
// snapshots.ts's.
import type { PrismaClient } from '../generated/prisma/client.js';
import {
  readOpenDates,
  readOpenSlotsBetween,
  readPullBasis,
  type PullBasis,
  type StoredOpenSlot,
} from './pull-basis.js';
import {
  beginPull,
  commitSuccessfulSync,
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
  /** What a scheduled pull plans by: the stored zone, event types, and when the account was last read. */
  pullBasis(connectionId: string): Promise<PullBasis>;
  /** The open slots starting in [from, until): which dates a pull may ask for directly, what went missing. */
  openSlotsBetween(connectionId: string, from: Date, until: Date): Promise<StoredOpenSlot[]>;
  /** The dates (in `zone`) holding an open slot that starts in [from, until): what bands count (readOpenDates). */
  openDates(connectionId: string, zone: string, from: Date, until: Date): Promise<Set<string>>;
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
    pullBasis: (connectionId) => readPullBasis(prisma, connectionId),
    openSlotsBetween: (connectionId, from, until) => readOpenSlotsBetween(prisma, connectionId, from, until),
    openDates: (connectionId, zone, from, until) => readOpenDates(prisma, connectionId, zone, from, until),
    commit: (sync) => commitSuccessfulSync(prisma, sync),
    recordFailed: (failure) => recordFailedSync(prisma, failure),
    recordInterrupted: (interrupted) => recordInterruptedSync(prisma, interrupted),
  };
}
