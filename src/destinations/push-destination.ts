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
// The writes themselves, and what a conflict at one of them does, are apply-operations.ts's; what a push records of
// itself beside them (its log entries, its end), push-records.ts's. A calendar deleted on the server pauses the
// destination and says so. Any other failure ends the push: push-policy.ts decides the state and the retry.
import { CalDavHeldBackError } from '../caldav/errors.js';
import type { Metrics } from '../lib/metrics.js';
import type { Logger } from '../log.js';
import {
  calendarHost,
  keepsPushing,
  type CaldavDestinationRecord,
  type OpenedPush,
  type CaldavDestinationStore,
} from '../store/caldav-destinations.js';
import type { CalendarAccount, FeedEventListing, OpenCalendarAccount } from './calendar-port.js';
import type { EventObject } from './event-objects.js';
import type { EventProofs } from './event-proofs.js';
import { planPush, planReconcile, type Listing } from './push-plan.js';
import { endedWithTheWrite, endLogEntries, recordPlanned } from './push-records.js';
import type { HostGate, HostPlace } from './host-gate.js';
import { isHostWait, type HostWait } from './host-limits.js';
import { failureOutcome, errorCode as codeOf, hostHoldMs, type FailureCause } from './push-policy.js';
import { applyOperations, CalendarGoneError, emptyTally, PushStopped } from './apply-operations.js';

export interface PushDeps {
  destinations: CaldavDestinationStore;
  openAccount: OpenCalendarAccount;
  /** What the feed shows now (feed-event-objects.ts), from the feed as the push's opening read it. */
  feedEvents(feedId: string, read: OpenedPush['feed']): Promise<EventObject[]>;
  proofs: Pick<EventProofs, 'fits'>;
  /** Per-host slots, rate and hold-backs; absent: no limit but WRITE_CONCURRENCY (tests of one push). */
  hosts?: Pick<HostGate, 'takePlace' | 'holdBack'>;
  reconcileIntervalMs: number;
  now: () => Date;
  metrics: Pick<Metrics, 'caldavPushes' | 'caldavFailures' | 'caldavPushLagSeconds'>;
  logger: Pick<Logger, 'info' | 'warn'>;
}

/** 'interrupted': paused or removed while it wrote; what is left is pushed on resume or cleaned up. */
export type PushResult = 'pushed' | 'reconciled' | 'failed' | 'skipped' | 'interrupted' | 'calendar-gone';

/** Events written at the same time; the rest wait their turn. */
const WRITE_CONCURRENCY = 4;

/**
 * The lanes a push asks its host for: one per write it knows of, up to WRITE_CONCURRENCY, and one for a listing
 * alone. A push of one change takes one slot, so others to the same server go on beside it.
 */
const lanesFor = (writes: number) => Math.min(WRITE_CONCURRENCY, Math.max(1, writes));

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

/**
 * The push did not start: its host's line is full ('busy'), or the host asked to come back later. Nothing was
 * sent; the caldav queue parks the push in its worker's line, or delays a held-back one's job by `retryInMs`,
 * freeing the worker for other hosts' pushes either way.
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

/** A place in a host's line taken before the push opened its destination: the host its job was queued for. */
export interface PlaceTaken {
  host: string;
  place: HostPlace;
}

/**
 * One push of the destination; never throws for the server's or the feed's failures (they are recorded). `taken`:
 * a place its worker took in the line of the host the job names, before the push's lock and first read.
 */
export async function pushDestination(
  deps: PushDeps,
  destinationId: string,
  taken?: PlaceTaken,
): Promise<PushResult> {
  const { destinations } = deps;
  const startedAt = deps.now();
  try {
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
    // An ended destination's cleanup of this calendar holds the same UIDs and proofs: what this push wrote or
    // took over, it would delete. The push waits for it to end (the dispatcher brings it back then).
    if (opened.awaitsCleanup) return 'skipped';

    return await pushOpened(deps, opened, startedAt, taken);
  } finally {
    // Not pushed, or pushed: the place is free again either way (a no-op once the push entered the line).
    taken?.place.leave();
  }
}

/**
 * The host's slots, held only while the push talks to the server (its listing and its writes), not while it reads
 * the feed or records its end: a slot is the server's capacity, and time spent elsewhere would waste it. `talk`
 * says when the server has answered its last request, and the slots are let go then, before that answer's record.
 */
async function withHostSlots<T>(
  deps: PushDeps,
  host: string,
  place: HostPlace | undefined,
  wanted: number,
  talk: (lanes: number, answered: () => void) => Promise<T>,
): Promise<T> {
  if (!deps.hosts || !place) return talk(wanted, () => undefined);
  const slots = await place.enter(wanted);
  if (isHostWait(slots)) throw new HostWaitError(host, slots.retryInMs, slots.reason);
  let released: Promise<void> | undefined;
  // Let go once the server has answered the last request (before its record), or when the talk ends.
  const letGo = () => (released ??= slots.release());
  try {
    return await talk(slots.lanes, () => void letGo());
  } catch (error: unknown) {
    // The server asked every client of it to wait: the host is held back before its slots are let go, so that
    // no push in this worker's line is handed one meanwhile.
    const holdMs = hostHoldMs(error);
    if (holdMs !== undefined) await deps.hosts.holdBack(host, holdMs).catch(() => undefined);
    throw error;
  } finally {
    await letGo();
  }
}

/** The push itself: read the feed, talk to the server within its host's slots, record the end. */
async function pushOpened(
  deps: PushDeps,
  { destination, feed, claim, credentials, written }: OpenedPush,
  startedAt: Date,
  taken: PlaceTaken | undefined,
): Promise<PushResult> {
  const { destinations } = deps;
  const destinationId = destination.id;
  const host = calendarHost(destination.calendarUrl);
  const reconcile = reconciliationDue(destination, startedAt, deps.reconcileIntervalMs);
  // A place in the host's line before the feed is read and rendered: a push with no place is sent back now, not
  // once that work is done.
  // The job named the host, and its worker took the place already; a calendar moved to another host since then
  // waits in that host's line instead.
  if (taken !== undefined && taken.host !== host) taken.place.leave();
  const place = taken?.host === host ? taken.place : deps.hosts?.takePlace(host);
  if (place && isHostWait(place)) throw new HostWaitError(host, place.retryInMs, place.reason);
  let account: CalendarAccount | undefined;
  try {
    const opened = await deps.openAccount({
      serverUrl: destination.calendarUrl,
      knownCalendar: true,
      ...credentials,
    });
    account = opened;
    const desired = await deps.feedEvents(destination.feedId, feed);
    const pushed = planPush(desired, written);
    // Nothing to write and no listing due: the server is not asked anything, and no slot is taken.
    const quietly = async () => {
      place?.leave();
      await recordPlanned(deps, destinationId, written, pushed);
      return { listing: undefined, plan: pushed, tally: emptyTally(), ended: undefined };
    };
    const { listing, plan, tally, ended } =
      !reconcile && pushed.operations.length === 0
        ? await quietly()
        : await withHostSlots(
            deps,
            host,
            place,
            lanesFor(pushed.operations.length),
            async (lanes, answered) => {
              const listing = reconcile
                ? await opened.listFeedEvents(destination.calendarUrl, destination.feedId)
                : undefined;
              const plan = listing
                ? planReconcile(desired, written, listingForPlan(listing, destination.feedId, deps.proofs))
                : pushed;
              // A listing that found nothing to write was the last request.
              if (plan.operations.length === 0) answered();
              await recordPlanned(deps, destinationId, written, plan);
              const tally = await applyOperations(
                deps,
                destination,
                opened,
                plan.operations,
                lanes,
                answered,
                true,
              );
              // The only write is recorded now, beside its slot's release as every write's record is, with the
              // push's end.
              const ended =
                tally.unrecorded === undefined
                  ? undefined
                  : await endedWithTheWrite(deps, destinationId, tally.unrecorded, {
                      claim,
                      reconciled: reconcile,
                      logEntries: endLogEntries(listing, plan, tally),
                    });
              return { listing, plan, tally, ended };
            },
          );

    const answeredAt = ended ?? deps.now();
    if (ended === undefined) {
      await destinations.pushSucceeded(
        destinationId,
        claim,
        answeredAt,
        reconcile,
        endLogEntries(listing, plan, tally),
      );
    }
    deps.metrics.caldavPushes.inc({ outcome: reconcile ? 'reconciled' : 'pushed' });
    for (const { cause } of tally.conflicts) deps.metrics.caldavFailures.inc({ cause });
    if (claim.pendingChanges > 0 && claim.pendingSince !== null) {
      deps.metrics.caldavPushLagSeconds.observe(
        Math.max(0, answeredAt.getTime() - claim.pendingSince.getTime()) / 1000,
      );
    }
    return reconcile ? 'reconciled' : 'pushed';
  } catch (error: unknown) {
    // Its place goes to the next push before this one's failure is recorded.
    place?.leave();
    // Nothing was sent: the push waits for the host (caldav-queue.ts), and nothing is recorded as failed.
    if (error instanceof HostWaitError) throw error;
    // Held back since the push began (another push's 429 or 503): it stops before its next request, what it
    // wrote is recorded, and the job waits for the hold in the delayed set rather than in this worker's slot.
    if (error instanceof CalDavHeldBackError) throw new HostWaitError(host, error.retryInMs, 'held back');
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
    // A Retry-After held the whole host back already, as the push let its slots go (withHostSlots).
    const outcome = failureOutcome(error, destination.consecutiveFailures + 1, failedAt);
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
  } finally {
    // Its place goes to the next push however this one ended (a no-op once it entered the line).
    place?.leave();
  }
}

function countFailure(deps: PushDeps, cause: FailureCause) {
  deps.metrics.caldavPushes.inc({ outcome: 'failed' });
  deps.metrics.caldavFailures.inc({ cause });
}
