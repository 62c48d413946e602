// One push of one destination (the caldav queue's job): read what the feed shows now, plan against what the
// destination holds (push-plan.ts), write it, and record each write as it is answered, so a push cut short (the
// server gone mid-way, the process killed) leaves a record the next push carries on from without losing or
// doubling an event. A reconciliation (due every CALDAV_RECONCILE_INTERVAL_MINUTES, asked for, or a destination's
// first push) lists the feed's events on the server first and repairs what differs.
//
// Each write's record says the destination's state as it is recorded (store: recordWritten), so a push stops
// before its next write once the destination is paused or removed; a removal waits for the record under way and
// then holds every write the push made, and the cleanup that deletes them runs under the push's own lock
// (caldav-queue.ts), so nothing a push writes is left behind by a removal.
//
// A precondition failure (412: the event changed or appeared since slotfeed last saw it) re-reads the feed's
// events on the server and retries that event once. A UID the calendar holds as someone else's event (409 or
// no-uid-conflict, or a 412 to a create while no event of the feed's has the UID) is that person's: left alone,
// said once in the log, recorded so that no push writes or deletes it, and the rest is pushed. A calendar deleted
// on the server pauses the destination and says so. Any other failure ends the push: push-policy.ts decides the
// state and the retry.
import type { Metrics } from '../lib/metrics.js';
import type { Logger } from '../log.js';
import {
  keepsPushing,
  type CaldavDestinationRecord,
  type OpenedPush,
  type CaldavDestinationStore,
  type StateAtWrite,
  type WrittenEvent,
} from '../store/caldav-destinations.js';
import type { CalendarAccount, FeedEventListing, OpenCalendarAccount, StoredEvent } from './calendar-port.js';
import type { EventObject } from './event-objects.js';
import type { EventProofs } from './event-proofs.js';
import { planPush, planReconcile, uidOf, type Listing, type PushOperation } from './push-plan.js';
import { isHostWait, type HostLimits, type HostWait } from './host-limits.js';
import { failureOutcome, type FailureCause } from './push-policy.js';

export interface PushDeps {
  destinations: CaldavDestinationStore;
  openAccount: OpenCalendarAccount;
  /** What the feed shows now (feed-event-objects.ts). */
  feedEvents(feedId: string): Promise<EventObject[]>;
  proofs: Pick<EventProofs, 'fits'>;
  /** Per-host slots, rate and hold-backs; absent: no limit but WRITE_CONCURRENCY (tests of one push). */
  hosts?: Pick<HostLimits, 'enter' | 'holdBack'>;
  reconcileIntervalMs: number;
  now: () => Date;
  metrics: Pick<Metrics, 'caldavPushes' | 'caldavFailures' | 'caldavPushLagSeconds'>;
  logger: Pick<Logger, 'info' | 'warn'>;
}

/** 'interrupted': paused or removed while it wrote; what is left is pushed on resume or cleaned up. */
export type PushResult = 'pushed' | 'reconciled' | 'failed' | 'skipped' | 'interrupted' | 'calendar-gone';

/** Events written at the same time; the rest wait their turn. */
const WRITE_CONCURRENCY = 4;

const codeOf = (error: unknown): string | undefined =>
  error instanceof Error ? (error as { code?: unknown }).code?.toString() : undefined;

/** Due for a reconciliation: asked for, never done, or done longer ago than the interval. */
export function reconciliationDue(
  destination: CaldavDestinationRecord,
  now: Date,
  intervalMs: number,
): boolean {
  return (
    destination.reconcileRequestedAt !== null ||
    destination.lastReconciledAt === null ||
    destination.lastReconciledAt.getTime() <= now.getTime() - intervalMs
  );
}

/** The calendar is gone from the server: said to the person as the destination's last error. */
class CalendarGoneError extends Error {
  constructor(calendarUrl: string) {
    super(
      `the calendar ${calendarUrl} is no longer on the server (deleted there?): paused, nothing is written ` +
        'into it; resume to make it again, or remove the destination',
    );
    this.name = 'CalendarGoneError';
  }
}

/**
 * The push did not start: its host's slots are all taken, or the host asked to come back later. Nothing was sent;
 * the caldav queue delays the job by `retryInMs`, freeing the worker for other hosts' pushes.
 */
export class HostWaitError extends Error {
  constructor(
    readonly host: string,
    readonly retryInMs: number,
    readonly reason: HostWait['reason'],
  ) {
    super(`${host} is ${reason}: the push waits ${retryInMs} ms`);
    this.name = 'HostWaitError';
  }
}

/** Stops a push: its destination was paused or removed while it wrote. */
class PushStopped extends Error {
  constructor(readonly state: StateAtWrite) {
    super(`the destination is ${state}`);
    this.name = 'PushStopped';
  }
}

interface Tally {
  created: number;
  changed: number;
  deleted: number;
  /** Events left alone: a second precondition failure, or a UID someone else's event holds (newly). */
  conflicts: { uid: string; message: string; cause: 'uid_conflict' | 'precondition' }[];
}

/** The listing as the plan reads it: each event proven slotfeed's or not. */
export function listingForPlan(
  listing: FeedEventListing,
  feedId: string,
  proofs: PushDeps['proofs'],
): Listing {
  return {
    complete: listing.complete,
    events: listing.events.map((event) => ({
      uid: event.uid,
      href: event.href,
      etag: event.etag,
      proven: proofs.fits(feedId, event.uid, event.proof),
    })),
  };
}

/** Applies the plan's operations to the calendar, recording each as the server answers it. */
async function applyOperations(
  deps: PushDeps,
  destination: CaldavDestinationRecord,
  account: CalendarAccount,
  operations: readonly PushOperation[],
  lanes: number,
): Promise<Tally> {
  const { destinations } = deps;
  const tally: Tally = { created: 0, changed: 0, deleted: 0, conflicts: [] };
  /** The destination's state as the last record said it: no write starts once it says stop. */
  let stopped: StateAtWrite | undefined;
  const heed = (state: StateAtWrite) => {
    if (!keepsPushing(state)) stopped ??= state;
  };
  const recordWrite = async (event: EventObject, stored: StoredEvent) =>
    heed(
      await destinations.recordWritten(destination.id, {
        uid: event.uid,
        href: stored.href,
        etag: stored.etag,
        digest: event.digest,
        writtenAt: deps.now(),
      }),
    );
  const forget = async (uid: string) => heed(await destinations.forgetWritten(destination.id, uid));
  /** The event as the server has it under this feed's marker now, or undefined. */
  const reread = async (uid: string) =>
    (await account.listFeedEvents(destination.calendarUrl, destination.feedId)).events.find(
      (e) => e.uid === uid,
    );
  let calendarChecked = false;
  /** A create refused as a clash or not found: is it the calendar itself that is gone? Asked once a push. */
  const calendarIsGone = async () => {
    if (calendarChecked) return false;
    calendarChecked = true;
    return !(await account.calendarExists(destination.calendarUrl));
  };
  const clash = async (operation: Extract<PushOperation, { kind: 'create' }>) => {
    heed(await destinations.recordClash(destination.id, operation.event.uid, deps.now()));
    if (operation.clashBefore) return;
    tally.conflicts.push({
      uid: operation.event.uid,
      message: 'the calendar holds an event with this UID that slotfeed did not write: left alone',
      cause: 'uid_conflict',
    });
  };

  const attempt = async (operation: PushOperation): Promise<void> => {
    if (operation.kind === 'create') {
      await recordWrite(operation.event, await account.createEvent(destination.calendarUrl, operation.event));
      tally.created += 1;
    } else if (operation.kind === 'update') {
      const stored = await account.updateEvent({
        href: operation.href,
        etag: operation.etag ?? '',
        icalendar: operation.event.icalendar,
      });
      await recordWrite(operation.event, stored);
      tally.changed += 1;
    } else {
      await account.deleteEvent({ href: operation.href, etag: operation.etag ?? '' });
      await forget(operation.uid);
      tally.deleted += 1;
    }
  };

  /** The operation again, against the event as the server has it now; undefined when nothing is left to do. */
  const against = async (operation: PushOperation): Promise<PushOperation | undefined> => {
    const now = await reread(uidOf(operation));
    if (operation.kind === 'delete') {
      if (now !== undefined) return { ...operation, href: now.href, etag: now.etag };
      await forget(operation.uid);
      return undefined;
    }
    if (now !== undefined) return { kind: 'update', event: operation.event, href: now.href, etag: now.etag };
    if (operation.kind === 'update') return { kind: 'create', event: operation.event };
    // A create refused while no event of this feed has the UID: the calendar holds someone else's.
    await clash(operation);
    return undefined;
  };

  const applyOne = async (operation: PushOperation): Promise<void> => {
    // A record without an ETag (the server named none) cannot be matched: read the event's current one first.
    const unmatched = operation.kind !== 'create' && operation.etag === null;
    if (!unmatched) {
      try {
        return await attempt(operation);
      } catch (error: unknown) {
        const code = codeOf(error);
        if (operation.kind === 'update' && code === 'uid_conflict' && operation.etag !== null) {
          // The server keeps another UID at slotfeed's href (it rewrote the one given) and refuses to change a
          // resource's UID: the event is replaced whole.
          await account.deleteEvent({ href: operation.href, etag: operation.etag });
          return attempt({ kind: 'create', event: operation.event });
        }
        if (operation.kind === 'create' && (code === 'uid_conflict' || code === 'not_found')) {
          // A server answers a PUT into a deleted collection with 404 or 409, as it answers a clash with 409.
          if (await calendarIsGone()) throw new CalendarGoneError(destination.calendarUrl);
          if (code === 'uid_conflict') return clash(operation);
        }
        // Gone where it was recorded (deleted there, or the server moved it): looked for by its UID first.
        const retried =
          code === 'precondition' ||
          (code === 'not_found' && (operation.kind === 'update' || operation.kind === 'delete'));
        if (!retried) throw error;
      }
    }
    const retry = await against(operation);
    if (retry === undefined) return;
    try {
      await attempt(retry);
    } catch (error: unknown) {
      const code = codeOf(error);
      if (retry.kind === 'create' && code === 'uid_conflict') return clash(retry);
      if (code === 'not_found' && retry.kind === 'delete') return forget(retry.uid);
      if (code !== 'precondition') throw error;
      tally.conflicts.push({
        uid: uidOf(operation),
        message: 'changed in the calendar again while slotfeed wrote it: left for the next push',
        cause: 'precondition',
      });
    }
  };

  // A few at a time; the first failure, or a record saying the destination was paused or removed, stops new
  // writes, lets those under way finish and be recorded, and ends the push.
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async () => {
    while (failure === undefined && stopped === undefined && next < operations.length) {
      const operation = operations[next++]!;
      try {
        await applyOne(operation);
      } catch (error: unknown) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, operations.length) }, lane));
  if (failure !== undefined) throw failure.error;
  if (stopped !== undefined) throw new PushStopped(stopped);
  return tally;
}

function pushSummary(tally: Tally): string | undefined {
  const parts = [
    tally.created > 0 ? `${tally.created} created` : '',
    tally.changed > 0 ? `${tally.changed} changed` : '',
    tally.deleted > 0 ? `${tally.deleted} deleted` : '',
  ].filter((part) => part !== '');
  return parts.length === 0 ? undefined : `pushed: ${parts.join(', ')}`;
}

/** The plan's adoptions and forgettings, recorded before any write. */
async function recordPlanned(
  deps: PushDeps,
  destinationId: string,
  written: ReadonlyMap<string, WrittenEvent>,
  plan: { forget: string[]; adopt: { uid: string; href: string; etag: string }[] },
) {
  for (const uid of plan.forget) await deps.destinations.forgetWritten(destinationId, uid);
  for (const adopted of plan.adopt) {
    const record = written.get(adopted.uid);
    if (record)
      await deps.destinations.recordWritten(destinationId, {
        ...record,
        href: adopted.href,
        etag: adopted.etag,
      });
  }
}

/** One push of the destination; never throws for the server's or the feed's failures (they are recorded). */
export async function pushDestination(deps: PushDeps, destinationId: string): Promise<PushResult> {
  const { destinations } = deps;
  const startedAt = deps.now();
  let opened: OpenedPush;
  try {
    opened = await destinations.openPush(destinationId, startedAt);
  } catch (error: unknown) {
    // Removed before the push began (its cleanup, not a push, deals with the calendar now).
    if (error instanceof Error && error.name === 'CaldavDestinationNotFoundError') return 'skipped';
    throw error;
  }
  const { destination } = opened;
  if (!keepsPushing(destination.state)) return 'skipped';
  if (destination.retryAt !== null && destination.retryAt > startedAt) return 'skipped';

  const host = new URL(destination.calendarUrl).host;
  const slots = deps.hosts
    ? await deps.hosts.enter(host, WRITE_CONCURRENCY)
    : { lanes: WRITE_CONCURRENCY, release: async () => undefined };
  if (isHostWait(slots)) throw new HostWaitError(host, slots.retryInMs, slots.reason);
  try {
    return await pushWithin(deps, opened, slots.lanes, startedAt);
  } finally {
    await slots.release();
  }
}

/** The push itself, within the slots its host gave it. */
async function pushWithin(
  deps: PushDeps,
  { destination, claim, credentials, written }: OpenedPush,
  lanes: number,
  startedAt: Date,
): Promise<PushResult> {
  const { destinations } = deps;
  const destinationId = destination.id;
  const host = new URL(destination.calendarUrl).host;
  const reconcile = reconciliationDue(destination, startedAt, deps.reconcileIntervalMs);
  let account: CalendarAccount | undefined;
  try {
    account = await deps.openAccount({ serverUrl: destination.calendarUrl, ...credentials });
    const desired = await deps.feedEvents(destination.feedId);
    const listing = reconcile
      ? await account.listFeedEvents(destination.calendarUrl, destination.feedId)
      : undefined;
    const plan = listing
      ? planReconcile(desired, written, listingForPlan(listing, destination.feedId, deps.proofs))
      : planPush(desired, written);
    await recordPlanned(deps, destinationId, written, plan);
    const tally = await applyOperations(deps, destination, account, plan.operations, lanes);

    const answeredAt = deps.now();
    const summary = pushSummary(tally);
    await destinations.pushSucceeded(destinationId, claim, answeredAt, reconcile, [
      ...(listing?.failedItems ?? []).map((item) => ({
        kind: 'listing',
        uid: null,
        message: `the server could not give ${item.href} (${item.status}) in its listing: skipped`,
      })),
      ...(listing?.complete === false
        ? [
            {
              kind: 'listing',
              uid: null,
              message:
                'the server’s listing was incomplete: nothing was deleted or forgotten on its strength',
            },
          ]
        : []),
      ...plan.repairs,
      ...tally.conflicts.map(({ uid, message }) => ({ kind: 'conflict', uid, message })),
      ...(summary === undefined ? [] : [{ kind: 'push', uid: null, message: summary }]),
    ]);
    deps.metrics.caldavPushes.inc({ outcome: reconcile ? 'reconciled' : 'pushed' });
    for (const { cause } of tally.conflicts) deps.metrics.caldavFailures.inc({ cause });
    if (claim.pendingChanges > 0 && claim.pendingSince !== null) {
      deps.metrics.caldavPushLagSeconds.observe(
        Math.max(0, answeredAt.getTime() - claim.pendingSince.getTime()) / 1000,
      );
    }
    return reconcile ? 'reconciled' : 'pushed';
  } catch (error: unknown) {
    if (error instanceof PushStopped) {
      deps.logger.info(
        { destinationId, state: error.state },
        'CalDAV push stopped: destination paused or removed',
      );
      return 'interrupted';
    }
    const failedAt = deps.now();
    // Anything not found (a listing, a write, a re-read): is it the calendar itself that is gone?
    const gone =
      error instanceof CalendarGoneError ||
      (codeOf(error) === 'not_found' &&
        account !== undefined &&
        !(await account.calendarExists(destination.calendarUrl).catch(() => true)));
    if (gone) {
      const calendarGone =
        error instanceof CalendarGoneError ? error : new CalendarGoneError(destination.calendarUrl);
      await destinations.calendarGone(destinationId, calendarGone.message, failedAt).catch(() => undefined);
      await destinations
        .log(destinationId, [{ kind: 'calendar-gone', uid: null, message: calendarGone.message }], failedAt)
        .catch(() => undefined);
      deps.logger.warn({ destinationId }, 'CalDAV destination’s calendar is gone: paused');
      return 'calendar-gone';
    }
    const outcome = failureOutcome(error, destination.consecutiveFailures + 1, failedAt);
    const retryAfterMs = (error as { retryAfterMs?: unknown }).retryAfterMs;
    if (outcome.cause === 'retry_later' && typeof retryAfterMs === 'number' && deps.hosts) {
      // The server asked every client of it to wait: the host, not only this destination, is held back.
      await deps.hosts.holdBack(host, retryAfterMs).catch(() => undefined);
    }
    try {
      await destinations.pushFailed(
        destinationId,
        { state: outcome.state, error: outcome.message, retryAt: outcome.retryAt },
        failedAt,
      );
    } catch (recording: unknown) {
      // Removed while it was pushed: nothing is left to record it on.
      if (recording instanceof Error && recording.name === 'CaldavDestinationNotFoundError') return 'skipped';
      throw recording;
    }
    await destinations.log(
      destinationId,
      [{ kind: 'failure', uid: null, message: outcome.message }],
      failedAt,
    );
    countFailure(deps, outcome.cause);
    deps.logger[outcome.state === 'needs_credentials' ? 'warn' : 'info'](
      { destinationId, cause: outcome.cause, retryAt: outcome.retryAt?.toISOString() ?? null },
      outcome.state === 'needs_credentials'
        ? 'CalDAV destination refused its credentials: no more pushes until they are replaced'
        : 'CalDAV push failed; tried again after a backoff',
    );
    return 'failed';
  }
}

function countFailure(deps: PushDeps, cause: FailureCause) {
  deps.metrics.caldavPushes.inc({ outcome: 'failed' });
  deps.metrics.caldavFailures.inc({ cause });
}
