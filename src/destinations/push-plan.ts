// What a push does to a destination, decided without I/O from what the feed shows now and what slotfeed knows
// the calendar holds of its own. Only slotfeed's UIDs are ever named: those of the feed's events, those it
// recorded writing, and (reconciliation) those the server lists under the feed's marker. A person's own events
// are in none of them.
//
// A push compares the feed with its record of what it wrote: a new event is created (If-None-Match: *), a
// changed one replaced under the ETag it recorded (If-Match), one the feed no longer shows deleted under it.
// A reconciliation compares with the server's own listing as well, and repairs what the record cannot see:
// an event deleted there is created again, one edited there (its ETag moved) is written back as the feed shows
// it, and a stray (marked as this feed's but in no record: written by a push whose answer was lost, or by an
// earlier destination on this calendar) is deleted when the feed does not show it, adopted when it does.
import type { WrittenEvent } from '../store/caldav-destinations.js';
import type { EventObject } from './event-objects.js';

/** An event of this feed as the server lists it (its marker names the feed). */
export interface ListedEvent {
  uid: string;
  href: string;
  etag: string;
}

export type PushOperation =
  | { kind: 'create'; event: EventObject }
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
  /** Records of events the server no longer has, which no operation needs: dropped. */
  forget: string[];
  /** Records that take the server's ETag: written without one named, unchanged since. */
  adopt: ListedEvent[];
  repairs: Repair[];
}

const ORDER: Record<PushOperation['kind'], number> = { delete: 0, update: 1, create: 2 };
const uidOf = (operation: PushOperation) =>
  operation.kind === 'delete' ? operation.uid : operation.event.uid;

function ordered(operations: PushOperation[]): PushOperation[] {
  return operations.sort(
    (a, b) => ORDER[a.kind] - ORDER[b.kind] || (uidOf(a) < uidOf(b) ? -1 : uidOf(a) > uidOf(b) ? 1 : 0),
  );
}

/** A push: the feed against the record of what was written. */
export function planPush(
  desired: readonly EventObject[],
  written: ReadonlyMap<string, WrittenEvent>,
): PushPlan {
  const operations: PushOperation[] = [];
  const shown = new Set<string>();
  for (const event of desired) {
    shown.add(event.uid);
    const record = written.get(event.uid);
    if (record === undefined) operations.push({ kind: 'create', event });
    else if (record.digest !== event.digest)
      operations.push({ kind: 'update', event, href: record.href, etag: record.etag });
  }
  for (const record of written.values()) {
    if (!shown.has(record.uid))
      operations.push({ kind: 'delete', uid: record.uid, href: record.href, etag: record.etag });
  }
  return { operations: ordered(operations), forget: [], adopt: [], repairs: [] };
}

/** A reconciliation: the feed against the record and against what the server lists under the feed's marker. */
export function planReconcile(
  desired: readonly EventObject[],
  written: ReadonlyMap<string, WrittenEvent>,
  listed: readonly ListedEvent[],
): PushPlan {
  const operations: PushOperation[] = [];
  const repairs: Repair[] = [];
  const forget: string[] = [];
  const adopt: ListedEvent[] = [];
  const onServer = new Map(listed.map((event) => [event.uid, event]));
  const shown = new Set<string>();

  for (const event of desired) {
    shown.add(event.uid);
    const record = written.get(event.uid);
    const there = onServer.get(event.uid);
    if (there === undefined) {
      operations.push({ kind: 'create', event });
      if (record !== undefined)
        repairs.push({
          kind: 'repair-created',
          uid: event.uid,
          message: 'missing from the calendar (deleted there?): written again as the feed shows it',
        });
      continue;
    }
    // A record without an ETag (the server named none) cannot tell an edit: it takes the server's.
    const editedThere = record !== undefined && record.etag !== null && record.etag !== there.etag;
    if (record === undefined || editedThere) {
      operations.push({ kind: 'update', event, href: there.href, etag: there.etag });
      repairs.push({
        kind: 'repair-restored',
        uid: event.uid,
        message:
          record === undefined
            ? 'in the calendar under this feed’s marker but not in slotfeed’s record: written as the feed shows it'
            : 'changed in the calendar since slotfeed wrote it: written back as the feed shows it',
      });
    } else if (record.digest !== event.digest) {
      operations.push({ kind: 'update', event, href: there.href, etag: there.etag });
    } else if (record.etag === null) {
      adopt.push(there);
    }
  }

  for (const there of onServer.values()) {
    if (shown.has(there.uid)) continue;
    operations.push({ kind: 'delete', uid: there.uid, href: there.href, etag: there.etag });
    if (!written.has(there.uid))
      repairs.push({
        kind: 'repair-deleted',
        uid: there.uid,
        message:
          'in the calendar under this feed’s marker, no longer in the feed and not in slotfeed’s record: deleted',
      });
  }
  for (const record of written.values()) {
    if (shown.has(record.uid) || onServer.has(record.uid)) continue;
    forget.push(record.uid);
    repairs.push({
      kind: 'repair-forgotten',
      uid: record.uid,
      message: 'no longer in the feed and already gone from the calendar: forgotten',
    });
  }
  return { operations: ordered(operations), forget: forget.sort(), adopt, repairs };
}
