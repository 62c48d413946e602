// Committing what one sync saw. Everything a successful run changes lands in one transaction: its run row,
// new versions of the profile, event types and overviews whose content hash changed, and the slot change set.
// The transaction reads the connection's state under its lock, the pure planner (plan-commit.ts) decides what
// changes, and this module writes that plan. The webhook deliveries its changes call for are written in the
// same transaction (webhook-outbox.ts), last: none for a sync that changed nothing.
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import type { SnapshotChanges, SnapshotInput } from './commit-plan.js';
import { ConnectionNotFoundError } from './connections.js';
import { commitEvents, planCommit } from './plan-commit.js';
import { pooledRows } from './pooled-rows.js';
import { readPrevious, writeSnapshotRows } from './snapshot-rows.js';
import { pooledTransaction, type SqlTransaction } from './pooled-transaction.js';
import { recordWebhookEvents } from './webhook-outbox.js';

export type { ChangeStaleness, EventTypeSnapshot, SnapshotChanges, SnapshotInput } from './commit-plan.js';

export interface RunRecord {
  id: string;
  jobId: string | null;
  attempt: number;
  startedAt: Date;
  callsByEndpoint: Record<string, number>;
  /** The pull's ticket (beginPull), taken before it started; absent for a run that never pulled. */
  pullSequence?: number;
}

function totalCalls(calls: Record<string, number>): number {
  return Object.values(calls).reduce((sum, n) => sum + n, 0);
}

/**
 * A ticket for a pull that is about to start. Tickets order pulls by when they began, whatever the clocks
 * of the machines that run them: a commit holding an older ticket than the last committed one is refused.
 */
export async function beginPull(prisma: PrismaClient, connectionId: string): Promise<number> {
  // From the pool, past Prisma (pooled-rows.ts): every sync takes one.
  const [row] = await pooledRows<{ pull_sequence: number }>(
    prisma,
    Prisma.sql`
      UPDATE connection SET pull_sequence = pull_sequence + 1 WHERE id = ${connectionId}::uuid
      RETURNING pull_sequence`,
  );
  if (!row) throw new ConnectionNotFoundError(connectionId);
  return row.pull_sequence;
}

export interface SuccessfulSync {
  connectionId: string;
  snapshot: SnapshotInput;
  run: RunRecord;
  now: Date;
  /**
   * When the connection is next due: a time, or (the sync worker) a function of its band state as this
   * commit found it (read under the commit's lock) and what the commit changed, giving the new band state
   * with the time (sync/band-schedule.ts).
   */
  next:
    | Date
    | ((
        previousBandState: unknown,
        changes: Omit<SnapshotChanges, 'webhookDeliveries'>,
      ) => { bandState: unknown; nextSyncAt: Date });
}

const SUPERSEDED: SnapshotChanges = {
  slotsOpened: 0,
  slotsClosed: 0,
  slotsRescheduled: 0,
  eventTypesChanged: 0,
  overviewsChanged: 0,
  profileChanged: false,
  feedVersionMoved: false,
  closedBy: {},
  bookingsInferred: 0,
  webhookDeliveries: 0,
  changedByBand: {},
  changedByPulledBand: {},
  changeStaleness: [],
  stalenessBoundSeconds: null,
  previousGoodSyncAt: null,
  superseded: true,
};

/** The row of an attempt that ended, however it ended; `details` adds what that outcome records. */
function endedRunRow(
  ended: { connectionId: string; run: RunRecord; now: Date },
  outcome: Prisma.SyncRunUncheckedCreateInput['outcome'],
  details: Partial<Prisma.SyncRunUncheckedCreateInput> = {},
): Prisma.SyncRunUncheckedCreateInput {
  const { run } = ended;
  return {
    id: run.id,
    connectionId: ended.connectionId,
    jobId: run.jobId,
    attempt: run.attempt,
    startedAt: run.startedAt,
    finishedAt: ended.now,
    outcome,
    upstreamCalls: totalCalls(run.callsByEndpoint),
    callsByEndpoint: run.callsByEndpoint,
    ...details,
  };
}

function runRow(
  sync: SuccessfulSync,
  outcome: 'succeeded' | 'superseded',
  changes: Partial<SnapshotChanges>,
): Prisma.SyncRunUncheckedCreateInput {
  return endedRunRow(sync, outcome, {
    bands: sync.snapshot.horizon?.bands.map((band) => band.name) ?? [],
    slotsOpened: changes.slotsOpened ?? 0,
    slotsClosed: changes.slotsClosed ?? 0,
    eventTypesChanged: changes.eventTypesChanged ?? 0,
    overviewsChanged: changes.overviewsChanged ?? 0,
    profileChanged: changes.profileChanged ?? false,
    changesByBand: changes.changedByBand ?? {},
    changeStaleness: changes.changeStaleness ?? [],
    stalenessBoundSeconds: changes.stalenessBoundSeconds ?? null,
  });
}

/** The run row of a commit (runRow's), written in the commit's transaction past Prisma. */
async function insertRunRow(tx: SqlTransaction, row: Prisma.SyncRunUncheckedCreateInput): Promise<void> {
  const json = (value: unknown) => JSON.stringify(value);
  await tx.rows(Prisma.sql`
    INSERT INTO sync_run (id, connection_id, job_id, attempt, started_at, finished_at, outcome, upstream_calls,
                          calls_by_endpoint, bands, slots_opened, slots_closed, event_types_changed,
                          overviews_changed, profile_changed, changes_by_band, change_staleness,
                          staleness_bound_seconds)
    VALUES (${row.id}::uuid, ${row.connectionId}::uuid, ${row.jobId ?? null}, ${row.attempt},
            ${row.startedAt}::timestamptz, ${row.finishedAt}::timestamptz, ${row.outcome}::sync_outcome,
            ${row.upstreamCalls}, ${json(row.callsByEndpoint)}::jsonb, ${row.bands as string[]}::text[],
            ${row.slotsOpened}, ${row.slotsClosed}, ${row.eventTypesChanged}, ${row.overviewsChanged},
            ${row.profileChanged}, ${json(row.changesByBand)}::jsonb, ${json(row.changeStaleness)}::jsonb,
            ${row.stalenessBoundSeconds ?? null}::float8)`);
}

// The commit is some ten statements, run on a pooled connection past Prisma's interactive transaction
// (pooled-transaction.ts): through Prisma they cost about twice the CPU, and every sync commits.
export async function commitSuccessfulSync(
  prisma: PrismaClient,
  sync: SuccessfulSync,
): Promise<SnapshotChanges> {
  const { connectionId, snapshot, run, now } = sync;
  return pooledTransaction(
    prisma,
    async (tx) => {
      // Serialises commits of one connection (a job recovered from a stalled worker may overlap the original).
      // The same round trip sets the transaction's switch: this commit moves the feed version itself, with its own
      // clock, so the triggers that move it for other writers of slots and event types stand aside (feed_views
      // migration); a superseded commit writes its run row alone, which no such trigger watches.
      const [locked] = await tx.rows<{
        committed_pull_sequence: number;
        last_good_sync_at: Date | null;
        first_synced_at: Date | null;
        band_state: unknown;
        pull_coverage: unknown;
      }>(Prisma.sql`
        SELECT committed_pull_sequence, last_good_sync_at, first_synced_at, band_state, pull_coverage,
               set_config('slotfeed.moves_feed_version', 'on', true) AS moves_feed_version
        FROM connection WHERE id = ${connectionId}::uuid FOR UPDATE`);
      if (!locked) throw new ConnectionNotFoundError(connectionId);
      // Turns are not enough: a pull that began before the last committed one saw older upstream state, and
      // committing it would reopen what the newer pull saw booked.
      if (run.pullSequence !== undefined && run.pullSequence < locked.committed_pull_sequence) {
        await insertRunRow(tx, runRow(sync, 'superseded', {}));
        return SUPERSEDED;
      }
      // A job that committed once already: its completion was lost by Redis (a failover to a replica it had not
      // reached yet) or it was handed to another worker while the first still ran, and it ran again. Only ids
      // slotfeed gives (a tick's, naming its tick and connection) are never reused; BullMQ's counter starts again
      // on a Redis that lost its keys, so a counter id says nothing about an earlier run. A statement of its own,
      // after the lock: a subquery of the locking read would see sync_run as it was before that read waited for
      // the lock, and miss the run of the commit it waited for (READ COMMITTED re-reads only the locked row).
      if (run.jobId !== null && !/^\d+$/.test(run.jobId)) {
        const [done] = await tx.rows<{ committed: boolean }>(Prisma.sql`
          SELECT EXISTS (SELECT 1 FROM sync_run WHERE connection_id = ${connectionId}::uuid
                         AND job_id = ${run.jobId} AND outcome = 'succeeded') AS committed`);
        if (done?.committed) {
          await insertRunRow(tx, runRow(sync, 'superseded', {}));
          return SUPERSEDED;
        }
      }
      const context = { connectionId, now, pullStartedAt: run.startedAt };
      const plan = planCommit(await readPrevious(tx, connectionId, locked.pull_coverage), snapshot, context);
      const bookings = await writeSnapshotRows(tx, connectionId, plan, now);
      const changes: Omit<SnapshotChanges, 'webhookDeliveries'> = {
        ...plan.changes,
        bookingsInferred: bookings.length,
        previousGoodSyncAt: locked.last_good_sync_at,
        superseded: false,
      };

      const next =
        typeof sync.next === 'function'
          ? sync.next(locked.band_state, changes)
          : { nextSyncAt: sync.next, bandState: locked.band_state };
      const set = [
        // A pull that did not read the profile leaves the stored identity and zone as they are.
        ...(snapshot.profile
          ? [
              Prisma.sql`email = ${snapshot.profile.email}`,
              Prisma.sql`display_name = ${snapshot.profile.name}`,
              Prisma.sql`timezone = ${snapshot.profile.timezone}`,
            ]
          : []),
        Prisma.sql`next_sync_at = ${next.nextSyncAt}::timestamptz`,
        Prisma.sql`band_state = ${JSON.stringify(next.bandState)}::jsonb`,
        Prisma.sql`pull_coverage = ${JSON.stringify(plan.pullCoverage)}::jsonb`,
        Prisma.sql`last_sync_at = ${now}::timestamptz`,
        Prisma.sql`last_good_sync_at = ${now}::timestamptz`,
        Prisma.sql`last_sync_outcome = 'succeeded'`,
        Prisma.sql`last_sync_error = NULL`,
        ...(run.pullSequence !== undefined
          ? [Prisma.sql`committed_pull_sequence = ${run.pullSequence}`]
          : []),
        // Kept on the connection: pruning old runs must not move it (the bookings report counts from it).
        ...(locked.first_synced_at === null ? [Prisma.sql`first_synced_at = ${now}::timestamptz`] : []),
        ...(changes.feedVersionMoved
          ? [Prisma.sql`feed_version = feed_version + 1`, Prisma.sql`feed_changed_at = ${now}::timestamptz`]
          : []),
        // As Prisma's @updatedAt sets it: this process's clock.
        Prisma.sql`updated_at = ${new Date()}::timestamptz`,
      ];
      await tx.rows(Prisma.sql`UPDATE connection SET ${Prisma.join(set)} WHERE id = ${connectionId}::uuid`);
      await insertRunRow(tx, runRow(sync, 'succeeded', changes));
      // Last: numbering the deliveries locks each endpoint's row until the commit, and a team's endpoint is
      // shared by every member's commits (webhook-outbox.ts).
      const events = commitEvents(plan, bookings, context);
      const deliveries = await recordWebhookEvents(tx, connectionId, events, now);
      return { ...changes, webhookDeliveries: deliveries.length };
    },
    { maxWait: 10_000, timeout: 120_000 },
  );
}

export interface FailedSync {
  connectionId: string;
  run: RunRecord;
  now: Date;
  error: { code: string; message: string };
  /** When the job layer will try again; absent when this attempt was the last. */
  retryAt?: Date;
  /** Set when the job has failed for good: when the scheduler should pick the connection up again. */
  nextSyncAt?: Date;
}

/**
 * A run cut short by a shutdown writes its run row only: a deploy is not a failure, so the connection's
 * last-sync status stays as the last finished run left it.
 */
export async function recordInterruptedSync(
  prisma: PrismaClient,
  interrupted: { connectionId: string; run: RunRecord; now: Date },
): Promise<void> {
  await prisma.syncRun.create({
    data: endedRunRow(interrupted, 'interrupted', {
      errorCode: 'interrupted',
      errorMessage: 'the worker shut down mid-sync; the job went back to the queue',
    }),
  });
}

/** A failed run writes its run row and the connection's last-sync status, and no snapshot rows. */
export async function recordFailedSync(prisma: PrismaClient, failure: FailedSync): Promise<void> {
  const { connectionId, now, error } = failure;
  await prisma.$transaction([
    prisma.syncRun.create({
      data: endedRunRow(failure, 'failed', {
        errorCode: error.code,
        errorMessage: error.message,
        retryAt: failure.retryAt ?? null,
      }),
    }),
    prisma.connection.update({
      where: { id: connectionId },
      data: {
        lastSyncAt: now,
        lastSyncOutcome: 'failed',
        lastSyncError: `${error.code}: ${error.message}`,
        ...(failure.nextSyncAt ? { nextSyncAt: failure.nextSyncAt } : {}),
      },
    }),
  ]);
}
