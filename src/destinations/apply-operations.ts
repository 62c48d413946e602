// The writes of one push: the plan's operations applied to the calendar a few at a time, each recorded as the
// server answers it (the record also says whether the destination is still pushed to: a push stops before its
// next write once it is paused or removed). A precondition failure re-reads the feed's events and retries that
// event once; a UID the calendar holds as someone else's event is recorded as a clash and left alone; an update
// the server refuses for a UID it rewrote replaces the event whole; a create refused because the calendar is gone
// ends the push with CalendarGoneError.
import {
  keepsPushing,
  type CaldavDestinationRecord,
  type CaldavDestinationStore,
  type StateAtWrite,
  type WrittenEvent,
} from '../store/caldav-destinations.js';
import type { CalendarAccount, StoredEvent } from './calendar-port.js';
import type { EventObject } from './event-objects.js';
import { uidOf, type PushOperation } from './push-plan.js';
import { errorCode as codeOf } from './push-policy.js';

export interface WriteDeps {
  destinations: Pick<CaldavDestinationStore, 'recordWritten' | 'recordClash' | 'forgetWritten'>;
  now: () => Date;
}

/** The calendar is gone from the server: said to the person as the destination's last error. */
export class CalendarGoneError extends Error {
  constructor(calendarUrl: string) {
    super(
      `the calendar ${calendarUrl} is no longer on the server (deleted there?): paused, nothing is written ` +
        'into it; resume to make it again, or remove the destination',
    );
    this.name = 'CalendarGoneError';
  }
}

/** Stops a push: its destination was paused or removed while it wrote. */
export class PushStopped extends Error {
  constructor(readonly state: StateAtWrite) {
    super(`the destination is ${state}`);
    this.name = 'PushStopped';
  }
}

export interface Tally {
  created: number;
  changed: number;
  deleted: number;
  /** Events left alone: a second precondition failure, or a UID someone else's event holds (newly). */
  conflicts: { uid: string; message: string; cause: 'uid_conflict' | 'precondition' }[];
  /**
   * A push's only write, answered and not yet recorded: its caller records it with the push's end, in one
   * statement (recordedWithTheEnd).
   */
  unrecorded?: Omit<WrittenEvent, 'clash'>;
}

export const emptyTally = (): Tally => ({ created: 0, changed: 0, deleted: 0, conflicts: [] });

/**
 * Applies the plan's operations to the calendar, recording each as the server answers it. `answered` is told once
 * the last request has been answered and none will follow, before that answer is recorded: the host's slots are
 * let go then, so a record in Postgres does not keep the server waiting. `recordedWithTheEnd`: a plan of one
 * operation leaves its write's record to the caller (Tally.unrecorded), which makes it with the push's end, a
 * round trip fewer; nothing can follow the only write, so nothing needs its answer of the destination's state sooner.
 */
export async function applyOperations(
  deps: WriteDeps,
  destination: CaldavDestinationRecord,
  account: CalendarAccount,
  operations: readonly PushOperation[],
  lanes: number,
  answered: () => void = () => undefined,
  recordedWithTheEnd = false,
): Promise<Tally> {
  const { destinations } = deps;
  const tally = emptyTally();
  /** The next operation to start. */
  let next = 0;
  let failure: { error: unknown } | undefined;
  /** Lanes whose operation may still send a request. */
  let requesting = 0;
  let allAnswered = false;
  /**
   * The lane's operation sends no more requests: the last such, with nothing left to start, tells `answered`. Not
   * after a failure: the push's caller first learns from it (a Retry-After holds the host back before its slots go).
   */
  const doneRequesting = () => {
    requesting -= 1;
    if (requesting === 0 && next >= operations.length && failure === undefined && !allAnswered) {
      allAnswered = true;
      answered();
    }
  };
  /** The destination's state as the last record said it: no write starts once it says stop. */
  let stopped: StateAtWrite | undefined;
  const heed = (state: StateAtWrite) => {
    if (!keepsPushing(state)) stopped ??= state;
  };
  const deferred = recordedWithTheEnd && operations.length === 1;
  const recordWrite = async (event: EventObject, stored: StoredEvent) => {
    const written = {
      uid: event.uid,
      href: stored.href,
      etag: stored.etag,
      digest: event.digest,
      writtenAt: deps.now(),
    };
    if (deferred) tally.unrecorded = written;
    else heed(await destinations.recordWritten(destination.id, written));
  };
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

  /** The operation's request; `lastRequest` once it is answered, before its record (a success ends the operation). */
  const attempt = async (operation: PushOperation, lastRequest: () => void): Promise<void> => {
    if (operation.kind === 'create') {
      const stored = await account.createEvent(destination.calendarUrl, operation.event);
      lastRequest();
      await recordWrite(operation.event, stored);
      tally.created += 1;
    } else if (operation.kind === 'update') {
      const stored = await account.updateEvent({
        href: operation.href,
        etag: operation.etag ?? '',
        icalendar: operation.event.icalendar,
      });
      lastRequest();
      await recordWrite(operation.event, stored);
      tally.changed += 1;
    } else {
      await account.deleteEvent({ href: operation.href, etag: operation.etag ?? '' });
      lastRequest();
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

  const applyOne = async (operation: PushOperation, lastRequest: () => void): Promise<void> => {
    // A record without an ETag (the server named none) cannot be matched: read the event's current one first.
    const unmatched = operation.kind !== 'create' && operation.etag === null;
    if (!unmatched) {
      try {
        return await attempt(operation, lastRequest);
      } catch (error: unknown) {
        const code = codeOf(error);
        if (operation.kind === 'update' && code === 'uid_conflict' && operation.etag !== null) {
          // The server keeps another UID at slotfeed's href (it rewrote the one given) and refuses to change a
          // resource's UID: the event is replaced whole.
          await account.deleteEvent({ href: operation.href, etag: operation.etag });
          return attempt({ kind: 'create', event: operation.event }, lastRequest);
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
      await attempt(retry, lastRequest);
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
  const lane = async () => {
    while (failure === undefined && stopped === undefined && next < operations.length) {
      const operation = operations[next++]!;
      requesting += 1;
      let requested = false;
      const lastRequest = () => {
        if (requested) return;
        requested = true;
        doneRequesting();
      };
      try {
        await applyOne(operation, lastRequest);
      } catch (error: unknown) {
        failure ??= { error };
      } finally {
        lastRequest();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, operations.length) }, lane));
  if (failure !== undefined) throw failure.error;
  if (stopped !== undefined) throw new PushStopped(stopped);
  return tally;
}
