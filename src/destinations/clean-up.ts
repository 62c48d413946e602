// The end of a destination (issue 34): deletes from the person's calendar the events slotfeed wrote there, then
// the cleanup the destination left (store/caldav-cleanups.ts). An event is deleted only when slotfeed can prove
// it wrote it: its UID or href is in the cleanup's record, or its proof fits its UID (event-proofs.ts); a copy
// the person made, or their own event, stays. It runs as the caldav queue's job under the destination's own
// lock, so it starts only once a push of the destination has ended and recorded every write it made.
//
// A calendar gone from the server (deleted there) leaves nothing to delete: done. Otherwise the cleanup ends once
// none of the events it recorded is known to be left (issue 41): each listed one is deleted, and a listing cut
// short proves no absence, so the recorded ones it did not list are deleted where recorded (a 404: gone already).
// What else the listing could not read (a colleague's event the account may not see, a 403 inside the 207) keeps
// no cleanup going, nor does a recorded event whose ETag slotfeed never learnt (it cannot be deleted where
// recorded): only one changed while being deleted does, tried again after a backoff that grows with each try.
// Refused credentials stop it (needs_credentials) until a person gives new ones or lets the events be; anything
// else is tried again after the same backoff.
import type { Logger } from '../log.js';
import type { CaldavCleanupStore, CleanupEvent } from '../store/caldav-cleanups.js';
import type { OpenCalendarAccount } from './calendar-port.js';
import type { EventProofs } from './event-proofs.js';
import { backoffMs, errorCode as codeOf, failureOutcome } from './push-policy.js';

export interface CleanUpDeps {
  cleanups: CaldavCleanupStore;
  openAccount: OpenCalendarAccount;
  proofs: Pick<EventProofs, 'fits'>;
  now: () => Date;
  logger: Pick<Logger, 'info' | 'warn'>;
}

export type CleanUpResult = 'done' | 'failed' | 'skipped';

/** Deletes what the ended destination `id` wrote into its calendar; never throws for the server's failures. */
export async function cleanUpDestination(deps: CleanUpDeps, id: string): Promise<CleanUpResult> {
  const cleanup = await deps.cleanups.find(id);
  if (cleanup === null || cleanup.state !== 'pending') return 'skipped';
  if (cleanup.retryAt !== null && cleanup.retryAt > deps.now()) return 'skipped';
  const recordedUids = new Set(cleanup.events.map((event) => event.uid));
  const recordedHrefs = new Set(cleanup.events.map((event) => event.href));
  try {
    const account = await deps.openAccount({
      serverUrl: cleanup.calendarUrl,
      knownCalendar: true,
      ...(await deps.cleanups.credentialsOf(id)),
    });
    let listing;
    try {
      listing = await account.listFeedEvents(cleanup.calendarUrl, cleanup.feedId);
    } catch (error: unknown) {
      if (codeOf(error) === 'not_found' && !(await account.calendarExists(cleanup.calendarUrl))) {
        await deps.cleanups.done(id, deps.now());
        return 'done';
      }
      throw error;
    }
    const ours = listing.events.filter(
      (event) =>
        recordedUids.has(event.uid) ||
        recordedHrefs.has(event.href) ||
        deps.proofs.fits(cleanup.feedId, event.uid, event.proof),
    );
    const listedHrefs = new Set(listing.events.map((event) => event.href));
    const listedUids = new Set(listing.events.map((event) => event.uid));
    // Recorded but not listed: gone already when the listing is whole; else deleted where recorded.
    const unlisted = listing.complete
      ? []
      : cleanup.events.filter(
          (event) => !listedHrefs.has(event.href) && !listedUids.has(event.uid) && event.etag !== null,
        );
    const left: CleanupEvent[] = [...ours.map(({ uid, href, etag }) => ({ uid, href, etag })), ...unlisted];
    const remaining: CleanupEvent[] = [];
    for (const event of left) {
      try {
        await account.deleteEvent({ href: event.href, etag: event.etag ?? '' });
      } catch (error: unknown) {
        // Gone already, or changed since it was listed (deleted on the next try with its new ETag).
        if (codeOf(error) === 'not_found') continue;
        if (codeOf(error) !== 'precondition') throw error;
        remaining.push(event);
      }
    }
    if (remaining.length === 0) {
      await deps.cleanups.done(id, deps.now());
      deps.logger.info(
        { destinationId: id, deleted: left.length },
        'CalDAV destination ended: its events deleted from the calendar',
      );
      return 'done';
    }
    const wait = backoffMs(cleanup.attempts + 1);
    await deps.cleanups.failed(id, {
      state: 'pending',
      error:
        `${remaining.length} of slotfeed’s event(s) changed while being deleted: tried again after ` +
        `${Math.ceil(wait / 1000)} s`,
      retryAt: new Date(deps.now().getTime() + wait),
      events: cleanup.events,
    });
    return 'failed';
  } catch (error: unknown) {
    // Its host is held back: the job waits for it in the delayed set (caldav-queue.ts), not in a worker's slot.
    if (codeOf(error) === 'held_back') throw error;
    const outcome = failureOutcome(error, cleanup.attempts + 1, deps.now());
    await deps.cleanups.failed(id, {
      state: outcome.state === 'needs_credentials' ? 'needs_credentials' : 'pending',
      error: outcome.message,
      retryAt: outcome.retryAt,
    });
    deps.logger[outcome.state === 'needs_credentials' ? 'warn' : 'info'](
      { destinationId: id, cause: outcome.cause },
      outcome.state === 'needs_credentials'
        ? 'CalDAV cleanup refused its credentials: slotfeed’s events stay in the calendar until they are replaced'
        : 'CalDAV cleanup failed; tried again after a backoff',
    );
    return 'failed';
  }
}
