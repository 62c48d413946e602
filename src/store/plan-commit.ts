// What one successful sync changes, decided from plain data: the connection's state as its commit read it
// (previous) and what the pull saw (pulled). No I/O, so every decision is tested without a database; the commit
// (snapshots.ts) writes the plan in one transaction. A re-sync that sees nothing new plans no version rows and no
// slot changes, and the feed version moves only when something a feed shows changed.
//
// A pure module of store/ rather than of sync/: the plan is a function of rows read under the commit's lock, so
// it runs inside the store's transaction, and it speaks only the store's own terms (stored open slots, the
// slot_close_reason enum, connection.pull_coverage, the outbox's events).
import { localDateOf } from '../lib/zone-days.js';
import { contentHash } from '../lib/content-hash.js';
import { dateBandOf } from '../lib/date-bands.js';
import { closeReasonOf, type CloseContext, type CloseReason } from './close-reasons.js';
import type {
  ChangeStaleness,
  CommitContext,
  CommitPlan,
  CommitPrevious,
  NewVersions,
  SnapshotChanges,
  SnapshotInput,
} from './commit-plan.js';
import {
  coverageAfterPull,
  EVERY_SLOT_START,
  oldestPulledAt,
  rangeOfDates,
  stalenessBoundSeconds,
  storedPullCoverage,
  type PulledRange,
} from './pull-coverage.js';
import { diffSlots } from './slot-diff.js';
import { availabilityChanged, bookingsInferred, type WebhookEvent } from './webhook-events.js';

/** Closes that change someone's availability: a slot that passed or left the horizon changed nothing. */
const ANNOUNCED_CLOSE_REASONS = new Set<CloseReason>(['taken', 'event_type_disabled', 'event_type_removed']);

export function planCommit(
  previous: CommitPrevious,
  pulled: SnapshotInput,
  context: CommitContext,
): CommitPlan {
  const { now } = context;
  // What the pull did not read (sync/pull-plan.ts) keeps its stored versions.
  const profile = pulled.profile
    ? newVersions(previous.profile ? [{ ...previous.profile, key: '' }] : [], [
        { key: '', contentHash: contentHash(pulled.profile.payload), payload: pulled.profile.payload },
      ])
    : UNCHANGED;
  const eventTypes = pulled.eventTypes
    ? newVersions(
        previous.eventTypes.map((row) => ({ ...row, key: row.upstreamEventId })),
        pulled.eventTypes.map((e) => ({ ...e, key: e.upstreamEventId, contentHash: contentHash(e.payload) })),
      )
    : UNCHANGED;
  const overviews = newVersions(
    previous.overviews
      .filter(overviewReplacedBy(pulled, previous))
      .map((row) => ({ ...row, key: overviewKey(row) })),
    pulled.overviews.map((o) => ({ ...o, key: overviewKey(o), contentHash: contentHash(o.payload) })),
  );
  const slots = planSlots(previous, pulled, context);
  const ranges = pulledRanges(pulled);
  const oldestPrevious = oldestPulledAt(previous.pullCoverage, ranges);
  const slotChanges = slots.open.length + slots.close.length + slots.reschedule.length;
  return {
    profile: withoutKeys(profile),
    eventTypes: withoutKeys(eventTypes),
    overviews: withoutKeys(overviews),
    slots: { open: slots.open, close: slots.close, reschedule: slots.reschedule },
    infersBookings: slots.close.some((c) => c.reason === 'taken'),
    availabilityChanged: slots.availabilityChanged,
    changes: {
      slotsOpened: slots.open.length,
      slotsClosed: slots.close.length,
      slotsRescheduled: slots.reschedule.length,
      eventTypesChanged: eventTypes.changed,
      overviewsChanged: overviews.changed,
      profileChanged: profile.changed > 0,
      feedVersionMoved: profile.changed > 0 || eventTypes.changed > 0 || slotChanges > 0,
      closedBy: slots.closedBy,
      changedByBand: slots.changedByBand,
      changedByPulledBand: slots.changedByPulledBand,
      changeStaleness: slots.changeStaleness,
      stalenessBoundSeconds:
        oldestPrevious === null ? null : (now.getTime() - oldestPrevious.getTime()) / 1000,
    },
    // Pulls are dated by when they began: a change after the pull read a date may have been missed.
    pullCoverage: storedPullCoverage(
      coverageAfterPull(
        previous.pullCoverage,
        ranges,
        context.pullStartedAt,
        now,
        pulled.eventTypes !== undefined,
      ),
    ),
  };
}

/** What the commit's webhook endpoints hear: availability that changed, then each booking it inferred. */
export function commitEvents(
  plan: Pick<CommitPlan, 'availabilityChanged'>,
  bookings: readonly { startsAt: Date; endsAt: Date; eventIds: string[] }[],
  context: Pick<CommitContext, 'connectionId' | 'now'>,
): WebhookEvent[] {
  return [
    ...(plan.availabilityChanged ? [plan.availabilityChanged] : []),
    ...bookingsInferred({ connectionId: context.connectionId, at: context.now, bookings }),
  ];
}

/**
 * The slot changes: what the pull fetched opens or moves; a stored slot it did not fetch closes where
 * closeReasonOf says it does (the one place that decides keep or close, and why).
 */
function planSlots(previous: CommitPrevious, pulled: SnapshotInput, context: CommitContext) {
  const { now, connectionId } = context;
  const storedById = new Map(previous.openSlots.map((slot) => [slot.id, slot]));
  const diff = diffSlots(previous.openSlots, pulled.slots);
  const closeContext = closeContextOf(pulled, previous, now);
  const close = diff.toClose.flatMap((id) => {
    const reason = closeReasonOf(storedById.get(id)!, closeContext);
    return reason === null ? [] : [{ id, reason }];
  });
  const closedBy: SnapshotChanges['closedBy'] = {};
  for (const { reason } of close) closedBy[reason] = (closedBy[reason] ?? 0) + 1;
  const announced = close.filter((c) => ANNOUNCED_CLOSE_REASONS.has(c.reason));
  const closed = announced.map((c) => storedById.get(c.id)!);
  const moved = diff.toReschedule.map((m) => ({ before: storedById.get(m.id)!, endsAt: m.endsAt }));
  // A slot closed because its event type was disabled or removed was shown by the list of event types.
  const byEventTypeList = new Set<object>(
    announced.filter((c) => c.reason.startsWith('event_type_')).map((c) => storedById.get(c.id)!),
  );
  const counted = countChanges(
    [...diff.toOpen, ...closed, ...moved.map((m) => m.before)],
    byEventTypeList,
    previous,
    pulled,
    now,
  );
  return {
    open: diff.toOpen,
    close,
    reschedule: diff.toReschedule,
    closedBy,
    availabilityChanged: availabilityChanged({
      connectionId,
      at: now,
      opened: [...diff.toOpen, ...moved.map((m) => ({ ...m.before, endsAt: m.endsAt }))],
      closed: [...closed, ...moved.map((m) => m.before)],
    }),
    ...counted,
  };
}

/** Changed slots by date band, by pulled band, and with how stale each may have been. */
function countChanges(
  changed: readonly { startsAt: Date }[],
  shownByEventTypeList: ReadonlySet<object>,
  previous: CommitPrevious,
  pulled: SnapshotInput,
  now: Date,
) {
  const changedByBand: SnapshotChanges['changedByBand'] = {};
  const changedByPulledBand: Record<string, number> = {};
  const staleness = new Map<string, ChangeStaleness>();
  const pulledBandOf = pulledBandOfStart(pulled);
  for (const band of pulled.horizon?.bands ?? []) changedByPulledBand[band.name] = 0;
  for (const slot of changed) {
    const band = dateBandOf(slot.startsAt, now);
    changedByBand[band] = (changedByBand[band] ?? 0) + 1;
    const pulledBand = pulledBandOf(slot.startsAt);
    if (pulledBand !== undefined)
      changedByPulledBand[pulledBand] = (changedByPulledBand[pulledBand] ?? 0) + 1;
    const found = { startsAt: slot.startsAt, byEventTypeList: shownByEventTypeList.has(slot) };
    const boundSeconds = stalenessBoundSeconds(previous.pullCoverage, found, now);
    if (boundSeconds === null) continue;
    const key = `${band} ${boundSeconds}`;
    const entry = staleness.get(key) ?? { band, boundSeconds, changes: 0 };
    entry.changes += 1;
    staleness.set(key, entry);
  }
  return { changedByBand, changedByPulledBand, changeStaleness: [...staleness.values()] };
}

/** The event types a commit decides by: those the pull read, else the stored ones (what it pulled slots for). */
function eventTypesOf(pulled: SnapshotInput, previous: CommitPrevious) {
  return pulled.eventTypes ?? previous.eventTypes;
}

function closeContextOf(pulled: SnapshotInput, previous: CommitPrevious, now: Date): CloseContext {
  const { horizon } = pulled;
  return {
    now,
    eventTypes: new Map(
      eventTypesOf(pulled, previous).map((e) => [e.upstreamEventId, { enabled: e.enabled }]),
    ),
    ...(horizon
      ? {
          horizon: {
            zone: horizon.zone,
            dates: new Set(horizon.dates),
            pulled: new Set(horizon.bands.flatMap((band) => band.dates)),
          },
        }
      : {}),
  };
}

/** The pulled band whose dates hold a slot start, if any. */
function pulledBandOfStart(pulled: SnapshotInput): (startsAt: Date) => string | undefined {
  const { horizon } = pulled;
  if (!horizon) return () => undefined;
  const bandOfDate = new Map<string, string>();
  for (const band of horizon.bands) for (const date of band.dates) bandOfDate.set(date, band.name);
  return (startsAt) => {
    const date = localDateOf(startsAt, horizon.zone);
    return date === null ? undefined : bandOfDate.get(date);
  };
}

/**
 * The slot starts a snapshot looked at: its pulled bands' dates, or everything when it is the whole picture. A
 * band's dates need not be consecutive (bands count open dates, sync/cadence-bands.ts), so each date is its own
 * range; coverageAfterPull merges neighbours pulled at the same time.
 */
function pulledRanges(pulled: SnapshotInput): PulledRange[] {
  const { horizon } = pulled;
  if (!horizon) return [EVERY_SLOT_START];
  return horizon.bands.flatMap((band) => band.dates.map((date) => rangeOfDates(horizon.zone, [date])));
}

const overviewKey = (o: { upstreamEventId: string; band: string }) => `${o.upstreamEventId}\u0000${o.band}`;

/**
 * An overview is kept per event type and band. A sync replaces the overviews it read (a band asked for by its
 * slot lists instead keeps the last one read, sync/pull-plan.ts), those of event types now gone or disabled, and
 * those of bands no longer configured; the others stay current.
 */
function overviewReplacedBy(pulled: SnapshotInput, previous: CommitPrevious) {
  const read = new Set(pulled.overviews.map(overviewKey));
  const enabledEvents = new Set(
    eventTypesOf(pulled, previous)
      .filter((e) => e.enabled)
      .map((e) => e.upstreamEventId),
  );
  const configuredBands = new Set(pulled.horizon?.bandNames ?? []);
  return (row: { upstreamEventId: string; band: string }) =>
    !pulled.horizon ||
    read.has(overviewKey(row)) ||
    !configuredBands.has(row.band) ||
    !enabledEvents.has(row.upstreamEventId);
}

/** No new version and none closed: what a pull that did not read a part plans for it. */
const UNCHANGED = { close: [], create: [], changed: 0 };

/**
 * A new version of each item whose hash differs from the current one's, and the current versions of changed and
 * vanished items closed. `changed` counts both.
 */
function newVersions<T extends { key: string; contentHash: string }>(
  current: readonly { id: bigint; key: string; contentHash: string }[],
  fetched: readonly T[],
): NewVersions<T> & { changed: number } {
  const currentByKey = new Map(current.map((row) => [row.key, row]));
  const fetchedKeys = new Set(fetched.map((item) => item.key));
  const changed = fetched.filter((item) => currentByKey.get(item.key)?.contentHash !== item.contentHash);
  const vanished = current.filter((row) => !fetchedKeys.has(row.key));
  return {
    close: [
      ...changed.flatMap((item) => currentByKey.get(item.key)?.id ?? []),
      ...vanished.map((row) => row.id),
    ],
    create: changed,
    changed: changed.length + vanished.length,
  };
}

function withoutKeys<T extends { key: string }>(versions: NewVersions<T>): NewVersions<Omit<T, 'key'>> {
  return {
    close: versions.close,
    create: versions.create.map(({ key: _key, ...item }) => item),
  };
}
