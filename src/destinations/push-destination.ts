// One push of one destination (the caldav queue's job): read what the feed shows now, plan against what the
// destination holds (push-plan.ts), write it, and record each write as it is answered, so a push cut short (the
// server gone mid-way, the process killed) leaves a record the next push carries on from without losing or
// doubling an event. A reconciliation (due every CALDAV_RECONCILE_INTERVAL_MINUTES, asked for, or a destination's
// first push) lists the feed's events on the server first and repairs what differs.
//
// A precondition failure (412: the event changed or appeared since slotfeed last saw it) re-reads the feed's
// events on the server and retries that event once; a second one, or a UID held by an event slotfeed did not
// write, leaves the event alone and says so in the destination's log. Any other failure ends the push:
// push-policy.ts decides the state and the retry.
import type { Metrics } from '../lib/metrics.js';
import type { Logger } from '../log.js';
import type { CaldavDestinationRecord, CaldavDestinationStore } from '../store/caldav-destinations.js';
import type { CalendarAccount, OpenCalendarAccount, StoredEvent } from './calendar-port.js';
import type { EventObject } from './event-objects.js';
import { planPush, planReconcile, type PushOperation } from './push-plan.js';
import { failureOutcome, type FailureCause } from './push-policy.js';

export interface PushDeps {
  destinations: CaldavDestinationStore;
  openAccount: OpenCalendarAccount;
  /** What the feed shows now (feed-event-objects.ts). */
  feedEvents(feedId: string): Promise<EventObject[]>;
  reconcileIntervalMs: number;
  now: () => Date;
  metrics: Pick<Metrics, 'caldavPushes' | 'caldavFailures' | 'caldavPushLagSeconds'>;
  logger: Pick<Logger, 'info' | 'warn'>;
}

export type PushResult = 'pushed' | 'reconciled' | 'failed' | 'skipped';

/** Events written at the same time; the rest wait their turn. */
const WRITE_CONCURRENCY = 4;

const codeOf = (error: unknown): string | undefined =>
  error instanceof Error ? (error as { code?: unknown }).code?.toString() : undefined;

const uidOf = (operation: PushOperation) =>
  operation.kind === 'delete' ? operation.uid : operation.event.uid;

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

interface Tally {
  created: number;
  changed: number;
  deleted: number;
  /** Events left alone after a second precondition failure, or whose UID someone else's event holds. */
  conflicts: { uid: string; message: string }[];
}

/** Applies the plan's operations to the calendar, recording each as the server answers it. */
async function applyOperations(
  deps: PushDeps,
  destination: CaldavDestinationRecord,
  account: CalendarAccount,
  operations: readonly PushOperation[],
): Promise<Tally> {
  const { destinations } = deps;
  const tally: Tally = { created: 0, changed: 0, deleted: 0, conflicts: [] };
  const recordWrite = async (event: EventObject, stored: StoredEvent) => {
    await destinations.recordWritten(destination.id, {
      uid: event.uid,
      href: stored.href,
      etag: stored.etag,
      digest: event.digest,
      writtenAt: deps.now(),
    });
  };
  /** The event as the server has it under this feed's marker now, or undefined. */
  const reread = async (uid: string) =>
    (await account.listFeedEvents(destination.calendarUrl, destination.feedId)).find((e) => e.uid === uid);

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
      await destinations.forgetWritten(destination.id, operation.uid);
      tally.deleted += 1;
    }
  };

  /** The operation again, against the event as the server has it now; undefined when nothing is left to do. */
  const against = async (operation: PushOperation): Promise<PushOperation | undefined> => {
    const now = await reread(uidOf(operation));
    if (operation.kind === 'delete') {
      if (now !== undefined) return { ...operation, href: now.href, etag: now.etag };
      await destinations.forgetWritten(destination.id, operation.uid);
      return undefined;
    }
    if (now !== undefined) return { kind: 'update', event: operation.event, href: now.href, etag: now.etag };
    if (operation.kind === 'update') return { kind: 'create', event: operation.event };
    // A create refused while no event of this feed has the UID: the calendar holds someone else's.
    tally.conflicts.push({
      uid: operation.event.uid,
      message: 'the calendar holds an event with this UID that slotfeed did not write: left alone',
    });
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
        if (code === 'not_found' && operation.kind === 'delete') {
          await destinations.forgetWritten(destination.id, operation.uid);
          return;
        }
        if (code !== 'precondition' && !(code === 'not_found' && operation.kind === 'update')) throw error;
      }
    }
    const retry = await against(operation);
    if (retry === undefined) return;
    try {
      await attempt(retry);
    } catch (error: unknown) {
      if (codeOf(error) !== 'precondition') throw error;
      tally.conflicts.push({
        uid: uidOf(operation),
        message: 'changed in the calendar again while slotfeed wrote it: left for the next push',
      });
    }
  };

  // A few at a time; the first failure stops new writes, lets those under way finish, and ends the push.
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async () => {
    while (failure === undefined && next < operations.length) {
      const operation = operations[next++]!;
      try {
        await applyOne(operation);
      } catch (error: unknown) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(WRITE_CONCURRENCY, operations.length) }, lane));
  if (failure !== undefined) throw failure.error;
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

/** One push of the destination; never throws for the server's or the feed's failures (they are recorded). */
export async function pushDestination(deps: PushDeps, destinationId: string): Promise<PushResult> {
  const { destinations } = deps;
  const startedAt = deps.now();
  let destination: CaldavDestinationRecord;
  try {
    destination = await destinations.get(destinationId);
  } catch (error: unknown) {
    if (error instanceof Error && error.name === 'CaldavDestinationNotFoundError') return 'skipped';
    throw error;
  }
  if (destination.state !== 'active' && destination.state !== 'failing') return 'skipped';
  if (destination.retryAt !== null && destination.retryAt > startedAt) return 'skipped';

  const reconcile = reconciliationDue(destination, startedAt, deps.reconcileIntervalMs);
  const claim = await destinations.claim(destinationId, startedAt);
  try {
    const credentials = await destinations.credentialsOf(destinationId);
    const account = await deps.openAccount({ serverUrl: destination.calendarUrl, ...credentials });
    const desired = await deps.feedEvents(destination.feedId);
    const written = await destinations.writtenEvents(destinationId);
    const plan = reconcile
      ? planReconcile(
          desired,
          written,
          await account.listFeedEvents(destination.calendarUrl, destination.feedId),
        )
      : planPush(desired, written);
    for (const uid of plan.forget) await destinations.forgetWritten(destinationId, uid);
    for (const adopted of plan.adopt) {
      const record = written.get(adopted.uid);
      if (record)
        await destinations.recordWritten(destinationId, {
          ...record,
          href: adopted.href,
          etag: adopted.etag,
        });
    }
    const tally = await applyOperations(deps, destination, account, plan.operations);

    const answeredAt = deps.now();
    const summary = pushSummary(tally);
    await destinations.log(
      destinationId,
      [
        ...plan.repairs,
        ...tally.conflicts.map((conflict) => ({ kind: 'conflict', ...conflict })),
        ...(summary === undefined ? [] : [{ kind: 'push', uid: null, message: summary }]),
      ],
      answeredAt,
    );
    await destinations.pushSucceeded(destinationId, claim, answeredAt, reconcile);
    deps.metrics.caldavPushes.inc({ outcome: reconcile ? 'reconciled' : 'pushed' });
    for (const _ of tally.conflicts) deps.metrics.caldavFailures.inc({ cause: 'precondition' });
    if (claim.pendingChanges > 0 && claim.pendingSince !== null) {
      deps.metrics.caldavPushLagSeconds.observe(
        Math.max(0, answeredAt.getTime() - claim.pendingSince.getTime()) / 1000,
      );
    }
    return reconcile ? 'reconciled' : 'pushed';
  } catch (error: unknown) {
    const failedAt = deps.now();
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
  }
}

function countFailure(deps: PushDeps, cause: FailureCause) {
  deps.metrics.caldavPushes.inc({ outcome: 'failed' });
  deps.metrics.caldavFailures.inc({ cause });
}
