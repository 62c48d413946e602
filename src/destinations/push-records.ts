// What a push records of itself beside its writes (push-destination.ts): the plan's adoptions and forgettings
// before any write, the entries its end writes to the destination's log, and the end of a push of one write,
// recorded with that write in one statement, or the write alone should that statement fail.
import {
  keepsPushing,
  type CaldavDestinationStore,
  type DestinationLogEntry,
  type PushClaim,
  type StateAtWrite,
  type WrittenEvent,
} from '../store/caldav-destinations.js';
import { PushStopped, type Tally } from './apply-operations.js';
import type { FeedEventListing } from './calendar-port.js';

interface RecordDeps {
  destinations: Pick<CaldavDestinationStore, 'recordWritten' | 'forgetWritten' | 'writtenAndSucceeded'>;
  now: () => Date;
}

function pushSummary(tally: Tally): string | undefined {
  const parts = [
    tally.created > 0 ? `${tally.created} created` : '',
    tally.changed > 0 ? `${tally.changed} changed` : '',
    tally.deleted > 0 ? `${tally.deleted} deleted` : '',
  ].filter((part) => part !== '');
  return parts.length === 0 ? undefined : `pushed: ${parts.join(', ')}`;
}

/** What the push's end writes to the destination's log: the listing's gaps, the repairs, conflicts and writes. */
export function endLogEntries(
  listing: FeedEventListing | undefined,
  plan: { repairs: readonly Omit<DestinationLogEntry, 'at'>[] },
  tally: Tally,
): Omit<DestinationLogEntry, 'at'>[] {
  const summary = pushSummary(tally);
  return [
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
            message: 'the server’s listing was incomplete: nothing was deleted or forgotten on its strength',
          },
        ]
      : []),
    ...plan.repairs,
    ...tally.conflicts.map(({ uid, message }) => ({ kind: 'conflict', uid, message })),
    ...(summary === undefined ? [] : [{ kind: 'push', uid: null, message: summary }]),
  ];
}

/**
 * A push of one write ends: the write's record and the push's end in one statement; when it answers; paused or
 * removed meanwhile, the push stops as a record saying so stops it (the write recorded, or, removed, put in the
 * cleanup). Should that statement fail, the write is recorded alone before the failure goes on: a write slotfeed
 * made is never left out of its record (a removal's cleanup deletes what the record holds).
 */
export async function endedWithTheWrite(
  deps: RecordDeps,
  destinationId: string,
  write: NonNullable<Tally['unrecorded']>,
  end: { claim: PushClaim; reconciled: boolean; logEntries: Omit<DestinationLogEntry, 'at'>[] },
): Promise<Date> {
  const answeredAt = deps.now();
  let state: StateAtWrite;
  try {
    state = await deps.destinations.writtenAndSucceeded(destinationId, write, { ...end, now: answeredAt });
  } catch (error: unknown) {
    await deps.destinations.recordWritten(destinationId, write).catch(() => undefined);
    throw error;
  }
  if (!keepsPushing(state)) throw new PushStopped(state);
  return answeredAt;
}

/** The plan's adoptions and forgettings, recorded before any write. */
export async function recordPlanned(
  deps: Pick<RecordDeps, 'destinations'>,
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
