// What a push does to a destination, decided without I/O from what the feed shows now and what slotfeed knows
// the calendar holds of its own. Only slotfeed's events are ever changed or deleted: those of the feed's UIDs,
// those it recorded writing, and (reconciliation) those the server lists under the feed's marker whose proof fits
// their UID (event-proofs.ts). An event that carries the marker but neither fits nor was recorded (a person's copy
// of one of slotfeed's events: apps keep the marker and give the copy a UID of its own) is left alone.
//
// A push compares the feed with its record of what it wrote: a new event is created (If-None-Match: *), a
// changed one replaced under the ETag it recorded (If-Match), one the feed no longer shows deleted under it.
// A UID the calendar holds as someone else's event (a clash, recorded as such) is neither written nor deleted.
// A reconciliation compares with the server's own listing as well, and repairs what the record cannot see:
// an event deleted there is created again, one edited there (its ETag moved) is written back as the feed shows
// it, one the server moved to another href or gave another UID is found by its recorded href, and a stray
// (proven slotfeed's but in no record: written by a push whose answer was lost, or by an earlier destination on
// this calendar) is deleted when the feed does not show it, adopted when it does. A listing the server cut short
// proves no absence: nothing is forgotten or written again on the strength of it.
import type { WrittenEvent } from '../store/caldav-destinations.js';
import type { EventObject } from './event-objects.js';

/** An event of this feed as the server lists it (its marker names the feed). */
export interface ListedEvent {
  uid: string;
  href: string;
  etag: string;
  /** Its proof fits its UID: slotfeed wrote it, recorded or not. */
  proven: boolean;
}

export interface Listing {
  events: readonly ListedEvent[];
  /** False: the server cut the answer short or could not give an item, so absence proves nothing. */
  complete: boolean;
}

export type PushOperation =
  | {
      kind: 'create';
      event: EventObject;
      /** The UID was someone else's event's at the last try: a refusal again is no news. */
      clashBefore?: boolean;
    }
  | { kind: 'update'; event: EventObject; href: string; etag: string | null }
  | { kind: 'delete'; uid: string; href: string; etag: string | null };

/** Why a reconciliation did something a push would not have: each goes into the destination's log. */
export interface Repair {
  kind: 'repair-created' | 'repair-restored' | 'repair-deleted' | 'repair-forgotten';
  uid: string;
  message: string;
}

export interface PushPlan {
  /** Deletes first, then updates, then creates: a moved block never shows twice in between. */
  operations: PushOperation[];
  /** Records no operation needs any more (events gone from the calendar, clashes the feed no longer has). */
  forget: string[];
  /** Records that take the server's href and ETag: written without an ETag named, or moved by the server. */
  adopt: { uid: string; href: string; etag: string }[];
  repairs: Repair[];
  /** Events under the feed's marker that slotfeed cannot prove it wrote: left alone. */
  leftAlone: ListedEvent[];
}

const ORDER: Record<PushOperation['kind'], number> = { delete: 0, update: 1, create: 2 };
export const uidOf = (operation: PushOperation): string =>
  operation.kind === 'delete' ? operation.uid : operation.event.uid;

function ordered(operations: PushOperation[]): PushOperation[] {
  return operations.sort(
    (a, b) => ORDER[a.kind] - ORDER[b.kind] || (uidOf(a) < uidOf(b) ? -1 : uidOf(a) > uidOf(b) ? 1 : 0),
  );
}

/** What the record alone asks for one desired event: nothing, an update, or a create. */
function fromRecord(event: EventObject, record: WrittenEvent | undefined): PushOperation | undefined {
  if (record === undefined) return { kind: 'create', event };
  if (record.digest !== event.digest) return { kind: 'update', event, href: record.href, etag: record.etag };
  return undefined;
}

/** A push: the feed against the record of what was written. */
export function planPush(
  desired: readonly EventObject[],
  written: ReadonlyMap<string, WrittenEvent>,
): PushPlan {
  const operations: PushOperation[] = [];
  const forget: string[] = [];
  const shown = new Set<string>();
  for (const event of desired) {
    shown.add(event.uid);
    const record = written.get(event.uid);
    if (record?.clash) continue;
    const operation = fromRecord(event, record);
    if (operation) operations.push(operation);
  }
  for (const record of written.values()) {
    if (shown.has(record.uid)) continue;
    if (record.clash) forget.push(record.uid);
    else operations.push({ kind: 'delete', uid: record.uid, href: record.href, etag: record.etag });
  }
  return { operations: ordered(operations), forget: forget.sort(), adopt: [], repairs: [], leftAlone: [] };
}

/**
 * The listed events by the UID slotfeed knows them under: their own, or, for one at an href slotfeed recorded
 * writing under another UID (the server rewrote it), that record's. The first of two for one UID wins; the
 * others are strays.
 */
function listedByOwnUid(
  listing: Listing,
  desired: ReadonlySet<string>,
  written: ReadonlyMap<string, WrittenEvent>,
): { byUid: Map<string, ListedEvent>; strays: ListedEvent[] } {
  const recordedAt = new Map<string, string>();
  for (const record of written.values()) if (!record.clash) recordedAt.set(record.href, record.uid);
  const byUid = new Map<string, ListedEvent>();
  const strays: ListedEvent[] = [];
  for (const event of listing.events) {
    const known = desired.has(event.uid) || (written.has(event.uid) && !written.get(event.uid)!.clash);
    const uid = known ? event.uid : (recordedAt.get(event.href) ?? event.uid);
    if (byUid.has(uid)) strays.push(event);
    else byUid.set(uid, event);
  }
  return { byUid, strays };
}

/** A reconciliation: the feed against the record and against what the server lists under the feed's marker. */
export function planReconcile(
  desired: readonly EventObject[],
  written: ReadonlyMap<string, WrittenEvent>,
  listing: Listing,
): PushPlan {
  const operations: PushOperation[] = [];
  const repairs: Repair[] = [];
  const forget: string[] = [];
  const adopt: PushPlan['adopt'] = [];
  const leftAlone: ListedEvent[] = [];
  const shown = new Set(desired.map((event) => event.uid));
  const { byUid: onServer, strays } = listedByOwnUid(listing, shown, written);

  for (const event of desired) {
    const record = written.get(event.uid);
    const there = onServer.get(event.uid);
    if (there === undefined) {
      if (record?.clash) {
        // Someone else's event held the UID: tried again here, at the reconciliation's pace, in case it is gone.
        operations.push({ kind: 'create', event, clashBefore: true });
      } else if (!listing.complete) {
        const operation = fromRecord(event, record);
        if (operation) operations.push(operation);
      } else {
        operations.push({ kind: 'create', event });
        if (record !== undefined)
          repairs.push({
            kind: 'repair-created',
            uid: event.uid,
            message: 'missing from the calendar (deleted there?): written again as the feed shows it',
          });
      }
      continue;
    }
    // A record without an ETag (the server named none) cannot tell an edit: it takes the server's.
    const editedThere =
      record !== undefined && !record.clash && record.etag !== null && record.etag !== there.etag;
    if (record === undefined || record.clash || editedThere) {
      operations.push({ kind: 'update', event, href: there.href, etag: there.etag });
      repairs.push({
        kind: 'repair-restored',
        uid: event.uid,
        message:
          record === undefined || record.clash
            ? 'in the calendar under this feed’s marker but not in slotfeed’s record: written as the feed shows it'
            : 'changed in the calendar since slotfeed wrote it: written back as the feed shows it',
      });
    } else if (record.digest !== event.digest || there.uid !== event.uid) {
      operations.push({ kind: 'update', event, href: there.href, etag: there.etag });
    } else if (record.etag === null || record.href !== there.href) {
      adopt.push({ uid: event.uid, href: there.href, etag: there.etag });
    }
  }

  const ownRecord = (uid: string) => {
    const record = written.get(uid);
    return record !== undefined && !record.clash;
  };
  for (const [uid, there] of onServer) {
    if (shown.has(uid)) continue;
    if (!ownRecord(uid) && !there.proven) {
      leftAlone.push(there);
      continue;
    }
    operations.push({ kind: 'delete', uid, href: there.href, etag: there.etag });
    if (!ownRecord(uid))
      repairs.push({
        kind: 'repair-deleted',
        uid,
        message:
          'in the calendar with slotfeed’s proof, no longer in the feed and not in its record: deleted',
      });
  }
  for (const stray of strays) {
    if (stray.proven) {
      operations.push({ kind: 'delete', uid: stray.uid, href: stray.href, etag: stray.etag });
      repairs.push({
        kind: 'repair-deleted',
        uid: stray.uid,
        message: 'a second copy of one of slotfeed’s events, with its proof: deleted',
      });
    } else leftAlone.push(stray);
  }
  for (const record of written.values()) {
    if (shown.has(record.uid) || onServer.has(record.uid)) continue;
    if (record.clash) {
      forget.push(record.uid);
    } else if (listing.complete) {
      forget.push(record.uid);
      repairs.push({
        kind: 'repair-forgotten',
        uid: record.uid,
        message: 'no longer in the feed and already gone from the calendar: forgotten',
      });
    } else {
      operations.push({ kind: 'delete', uid: record.uid, href: record.href, etag: record.etag });
    }
  }
  return { operations: ordered(operations), forget: forget.sort(), adopt, repairs, leftAlone };
}
