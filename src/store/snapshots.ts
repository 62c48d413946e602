// Committing what one sync saw. Everything a successful run changes lands in one transaction: its run row,
// new versions of the profile, event types and overviews whose content hash changed, and the slot change set.
// A re-sync that sees nothing new writes no snapshot rows at all, and the feed version moves only when
// something a feed shows has changed. The webhook deliveries its changes call for are written in the same
// transaction (webhook-outbox.ts): none for a sync that changed nothing.
import type { PrismaClient } from '../generated/prisma/client.js';
import { ConnectionNotFoundError } from './connections.js';
import type { Prisma } from '../generated/prisma/client.js';
import { DateTime } from 'luxon';
import { contentHash } from '../lib/content-hash.js';
import { closeReasonOf, type CloseContext, type CloseReason } from './close-reasons.js';
import { diffSlots, type FetchedSlot } from './slot-diff.js';
import { recordWebhookEvents } from './webhook-outbox.js';
import { dateBandOf, type DateBand } from '../lib/date-bands.js';
import {
  coverageAfterPull,
  EVERY_SLOT_START,
  oldestPulledAt,
  rangeOfDates,
  readPullCoverage,
  stalenessBoundSeconds,
  storedPullCoverage,
  type PullCoverage,
  type PulledRange,
} from './pull-coverage.js';
import { availabilityChanged, bookingsInferred, type WebhookEvent } from './webhook-events.js';

export interface EventTypeSnapshot {
  upstreamEventId: string;
  title: string;
  durationMinutes: number;
  enabled: boolean;
  /** `is_secret` upstream. */
  secret: boolean;
  url: string | null;
  color: string | null;
  payload: unknown;
}

export interface SnapshotInput {
  profile: { payload: unknown; email: string; name: string; timezone: string };
  /** Every event type the account has, enabled or not; an event type missing here was deleted. */
  eventTypes: EventTypeSnapshot[];
  /** Overviews of the enabled event types over each band pulled. */
  overviews: { upstreamEventId: string; band: string; payload: unknown }[];
  /** Every open slot on the dates pulled; an open slot missing here is gone. */
  slots: FetchedSlot[];
  /**
   * The horizon's dates in the account's zone, and the bands of it this sync pulled. A stored slot dated
   * outside the horizon closed because the window moved; one dated inside it but in no pulled band was not
   * looked at, and the commit leaves it as it is. Absent: the slots are the whole picture (tests).
   */
  horizon?: {
    zone: string;
    dates: readonly string[];
    /** Every band of the configuration (SYNC_BANDS): an overview of another band is left from an older one. */
    bandNames: readonly string[];
    /** The bands pulled, each with its dates and the calls it cost. */
    bands: readonly { name: string; dates: readonly string[]; calls: number }[];
  };
}

export interface RunRecord {
  id: string;
  jobId: string | null;
  attempt: number;
  startedAt: Date;
  callsByEndpoint: Record<string, number>;
  /** The pull's ticket (beginPull), taken before it started; absent for a run that never pulled. */
  pullSequence?: number;
}

export interface SnapshotChanges {
  slotsOpened: number;
  slotsClosed: number;
  slotsRescheduled: number;
  eventTypesChanged: number;
  overviewsChanged: number;
  profileChanged: boolean;
  feedVersionMoved: boolean;
  /** Slots closed, by why. */
  closedBy: Partial<Record<CloseReason, number>>;
  /** Bookings inferred from the slots this sync saw taken. */
  bookingsInferred: number;
  /** Webhook deliveries the commit wrote to the outbox (its changes, for every interested endpoint). */
  webhookDeliveries: number;
  /** Slots that opened, closed as taken or moved, by how far ahead they start (for the staleness metric). */
  changedByBand: Partial<Record<DateBand, number>>;
  /**
   * The same changes with how stale each may have been: the time since what showed it was last pulled
   * (pull-coverage.ts), by band and bound. Changes nothing had looked at before are not in it.
   */
  changeStaleness: ChangeStaleness[];
  /** The time since the oldest previous pull of what this sync pulled; null when none of it was pulled before. */
  stalenessBoundSeconds: number | null;
  /** The connection's previous successful sync (null: this is its first). */
  previousGoodSyncAt: Date | null;
  /** Slots opened, closed or moved on each pulled band's dates (how the band schedule adapts). */
  changedByPulledBand: Record<string, number>;
  /** The pull began before one that committed already: nothing was written but the run row. */
  superseded: boolean;
}

/** `changes` slot changes, starting in date band `band`, that may each have been `boundSeconds` stale. */
export type ChangeStaleness = { band: DateBand; boundSeconds: number; changes: number };

type Tx = Prisma.TransactionClient;

/** The slot starts a snapshot looked at: its pulled bands' dates, or everything when it is the whole picture. */
function pulledRanges(snapshot: SnapshotInput): PulledRange[] {
  const horizon = snapshot.horizon;
  if (!horizon) return [EVERY_SLOT_START];
  return horizon.bands.map((band) => rangeOfDates(horizon.zone, band.dates));
}

/** Closes that change someone's availability: a slot that passed or left the horizon changed nothing. */
const WEBHOOK_CLOSE_REASONS = new Set<string>(['taken', 'event_type_disabled', 'event_type_removed']);

function totalCalls(calls: Record<string, number>): number {
  return Object.values(calls).reduce((sum, n) => sum + n, 0);
}

/** Writes a new version of each item whose hash differs from the current one, and closes vanished ones. */
async function versionRows<T extends { key: string; hash: string }>(
  current: { id: bigint; key: string; contentHash: string }[],
  fetched: T[],
  close: (ids: bigint[]) => Promise<unknown>,
  create: (items: T[]) => Promise<unknown>,
): Promise<number> {
  const currentByKey = new Map(current.map((row) => [row.key, row]));
  const fetchedKeys = new Set(fetched.map((item) => item.key));
  const changed = fetched.filter((item) => currentByKey.get(item.key)?.contentHash !== item.hash);
  const toClose = [
    ...changed.flatMap((item) => currentByKey.get(item.key)?.id ?? []),
    ...current.filter((row) => !fetchedKeys.has(row.key)).map((row) => row.id),
  ];
  if (toClose.length > 0) await close(toClose);
  if (changed.length > 0) await create(changed);
  return changed.length + current.filter((row) => !fetchedKeys.has(row.key)).length;
}

async function commitProfile(tx: Tx, connectionId: string, profile: SnapshotInput['profile'], now: Date) {
  const hash = contentHash(profile.payload);
  const current = await tx.profile.findFirst({ where: { connectionId, validTo: null } });
  if (current?.contentHash === hash) return false;
  if (current) await tx.profile.update({ where: { id: current.id }, data: { validTo: now } });
  await tx.profile.create({
    data: {
      connectionId,
      contentHash: hash,
      payload: profile.payload as Prisma.InputJsonValue,
      validFrom: now,
    },
  });
  return true;
}

async function commitEventTypes(tx: Tx, connectionId: string, eventTypes: EventTypeSnapshot[], now: Date) {
  const current = await tx.eventType.findMany({ where: { connectionId, validTo: null } });
  return versionRows(
    current.map((row) => ({ id: row.id, key: row.upstreamEventId, contentHash: row.contentHash })),
    eventTypes.map((e) => ({ ...e, key: e.upstreamEventId, hash: contentHash(e.payload) })),
    (ids) => tx.eventType.updateMany({ where: { id: { in: ids } }, data: { validTo: now } }),
    (items) =>
      tx.eventType.createMany({
        data: items.map((e) => ({
          connectionId,
          upstreamEventId: e.upstreamEventId,
          title: e.title,
          durationMinutes: e.durationMinutes,
          enabled: e.enabled,
          secret: e.secret,
          url: e.url,
          color: e.color,
          contentHash: e.hash,
          payload: e.payload as Prisma.InputJsonValue,
          validFrom: now,
        })),
      }),
  );
}

/**
 * An overview is kept per event type and band. A partial sync replaces the overviews of the bands it pulled
 * and of event types now gone or disabled; the other bands' overviews stay current.
 */
async function commitOverviews(tx: Tx, connectionId: string, snapshot: SnapshotInput, now: Date) {
  const { overviews } = snapshot;
  const pulledBands = new Set(overviews.map((o) => o.band));
  const enabledEvents = new Set(snapshot.eventTypes.filter((e) => e.enabled).map((e) => e.upstreamEventId));
  const configuredBands = new Set(snapshot.horizon?.bandNames ?? []);
  const inScope = (row: { upstreamEventId: string; band: string }) =>
    !snapshot.horizon ||
    pulledBands.has(row.band) ||
    !configuredBands.has(row.band) ||
    !enabledEvents.has(row.upstreamEventId);
  const current = (await tx.overview.findMany({ where: { connectionId, validTo: null } })).filter(inScope);
  const keyOf = (o: { upstreamEventId: string; band: string }) => `${o.upstreamEventId}\u0000${o.band}`;
  return versionRows(
    current.map((row) => ({ id: row.id, key: keyOf(row), contentHash: row.contentHash })),
    overviews.map((o) => ({ ...o, key: keyOf(o), hash: contentHash(o.payload) })),
    (ids) => tx.overview.updateMany({ where: { id: { in: ids } }, data: { validTo: now } }),
    (items) =>
      tx.overview.createMany({
        data: items.map((o) => ({
          connectionId,
          upstreamEventId: o.upstreamEventId,
          band: o.band,
          contentHash: o.hash,
          payload: o.payload as Prisma.InputJsonValue,
          validFrom: now,
        })),
      }),
  );
}

/**
 * What a (partial) pull may close: a slot on a date it pulled, a slot it knows is gone for a reason that
 * holds on every date (its event type was removed or disabled, per the whole list it pulled), and bookkeeping
 * that needs no pull at all (a slot that started, a date that left the horizon). A slot on a horizon date it
 * did not pull stays as the pull that last saw it left it.
 */
function partialScope(snapshot: SnapshotInput, now: Date) {
  const horizon = snapshot.horizon;
  const bandOfDate = new Map<string, string>();
  for (const band of horizon?.bands ?? []) for (const date of band.dates) bandOfDate.set(date, band.name);
  const horizonDates = new Set(horizon?.dates ?? []);
  const enabled = new Set(snapshot.eventTypes.filter((e) => e.enabled).map((e) => e.upstreamEventId));
  const dateOf = (startsAt: Date) =>
    horizon ? DateTime.fromJSDate(startsAt, { zone: horizon.zone }).toISODate() : null;
  return {
    pulledBandOf(startsAt: Date): string | undefined {
      const date = dateOf(startsAt);
      return date === null ? undefined : bandOfDate.get(date);
    },
    mayClose(slot: { eventId: string; startsAt: Date }): boolean {
      if (!horizon) return true;
      if (slot.startsAt.getTime() <= now.getTime() || !enabled.has(slot.eventId)) return true;
      const date = dateOf(slot.startsAt);
      return date === null || bandOfDate.has(date) || !horizonDates.has(date);
    },
  };
}

async function commitSlots(
  tx: Tx,
  connectionId: string,
  snapshot: SnapshotInput,
  now: Date,
  previousCoverage: PullCoverage,
): Promise<
  ReturnType<typeof diffSlots> & {
    closedBy: SnapshotChanges['closedBy'];
    bookingsInferred: number;
    events: WebhookEvent[];
    changedByBand: SnapshotChanges['changedByBand'];
    changedByPulledBand: SnapshotChanges['changedByPulledBand'];
    changeStaleness: ChangeStaleness[];
  }
> {
  const open = await tx.slot.findMany({
    where: { connectionId, goneAt: null },
    select: { id: true, upstreamEventId: true, startsAt: true, endsAt: true, sequence: true },
  });
  const stored = open.map((row) => ({ ...row, eventId: row.upstreamEventId }));
  const storedById = new Map(stored.map((slot) => [slot.id, slot]));
  const scope = partialScope(snapshot, now);
  const fullDiff = diffSlots(stored, snapshot.slots);
  // Opened and moved slots are what the pull fetched; a slot closes only where the pull could see it gone.
  const changes = {
    ...fullDiff,
    toClose: fullDiff.toClose.filter((id) => scope.mayClose(storedById.get(id)!)),
  };
  const context: CloseContext = {
    now,
    eventTypes: new Map(snapshot.eventTypes.map((e) => [e.upstreamEventId, { enabled: e.enabled }])),
    ...(snapshot.horizon
      ? { horizon: { zone: snapshot.horizon.zone, dates: new Set(snapshot.horizon.dates) } }
      : {}),
  };
  const reasons = changes.toClose.map((id) => closeReasonOf(storedById.get(id)!, context));
  const closedBy: SnapshotChanges['closedBy'] = {};
  for (const reason of reasons) closedBy[reason] = (closedBy[reason] ?? 0) + 1;
  // One statement per kind of change, whatever its size: arrays bound as parameters and unnested in SQL.
  // Prisma's createMany binds 6 parameters a row (a 10,000-slot first sync is 60,000), updateMany one per
  // id, and update runs one statement a row.
  if (changes.toClose.length > 0) {
    await tx.$executeRaw`
      UPDATE slot SET gone_at = ${now}, close_reason = c.reason::slot_close_reason
      FROM unnest(${changes.toClose}::bigint[], ${reasons}::text[]) AS c(id, reason)
      WHERE slot.id = c.id AND slot.connection_id = ${connectionId}::uuid`;
  }
  if (changes.toOpen.length > 0) {
    await tx.$executeRaw`
      INSERT INTO slot (connection_id, upstream_event_id, starts_at, ends_at, first_seen_at, last_changed_at)
      SELECT ${connectionId}::uuid, o.event_id, o.starts_at, o.ends_at, ${now}, ${now}
      FROM unnest(${changes.toOpen.map((slot) => slot.eventId)}::text[],
                  ${changes.toOpen.map((slot) => slot.startsAt)}::timestamptz[],
                  ${changes.toOpen.map((slot) => slot.endsAt)}::timestamptz[]) AS o(event_id, starts_at, ends_at)`;
  }
  if (changes.toReschedule.length > 0) {
    await tx.$executeRaw`
      UPDATE slot SET ends_at = m.ends_at, sequence = m.sequence, last_changed_at = ${now}
      FROM unnest(${changes.toReschedule.map((moved) => moved.id)}::bigint[],
                  ${changes.toReschedule.map((moved) => moved.endsAt)}::timestamptz[],
                  ${changes.toReschedule.map((moved) => moved.sequence)}::int[]) AS m(id, ends_at, sequence)
      WHERE slot.id = m.id AND slot.connection_id = ${connectionId}::uuid`;
  }
  // After every slot write: what a booking is (the still-open slots included) is defined once, in SQL.
  const bookings = closedBy.taken
    ? await tx.$queryRaw<{ starts_at: Date; ends_at: Date; event_ids: string[] }[]>`
        INSERT INTO booking (connection_id, detected_at, starts_at, ends_at, event_ids, slots_closed)
        SELECT ${connectionId}::uuid, ${now}, b.starts_at, b.ends_at, b.event_ids, b.slots_closed
        FROM slotfeed_inferred_bookings(${connectionId}::uuid, ${now}) b
        RETURNING starts_at, ends_at, event_ids`
    : [];
  // What webhook endpoints hear: availability that changed (slots that passed or left the horizon did not
  // change anyone's availability), and each booking inferred.
  const closed = changes.toClose.flatMap((id, i) =>
    WEBHOOK_CLOSE_REASONS.has(reasons[i]!) ? [storedById.get(id)!] : [],
  );
  const moved = changes.toReschedule.map((m) => ({ before: storedById.get(m.id)!, endsAt: m.endsAt }));
  const availability = availabilityChanged({
    connectionId,
    at: now,
    opened: [...changes.toOpen, ...moved.map((m) => ({ ...m.before, endsAt: m.endsAt }))],
    closed: [...closed, ...moved.map((m) => m.before)],
  });
  const events = [
    ...(availability ? [availability] : []),
    ...bookingsInferred({
      connectionId,
      at: now,
      bookings: bookings.map((b) => ({ startsAt: b.starts_at, endsAt: b.ends_at, eventIds: b.event_ids })),
    }),
  ];
  const changedByBand: SnapshotChanges['changedByBand'] = {};
  const changedByPulledBand: Record<string, number> = {};
  const staleness = new Map<string, ChangeStaleness>();
  // A slot closed because its event type was disabled or removed was shown by the list of event types.
  const closedByEventTypeList = new Set<object>(
    changes.toClose.flatMap((id, i) => (reasons[i]!.startsWith('event_type_') ? [storedById.get(id)!] : [])),
  );
  for (const band of snapshot.horizon?.bands ?? []) changedByPulledBand[band.name] = 0;
  for (const slot of [...changes.toOpen, ...closed, ...moved.map((m) => m.before)]) {
    const band = dateBandOf(slot.startsAt, now);
    changedByBand[band] = (changedByBand[band] ?? 0) + 1;
    const pulledBand = scope.pulledBandOf(slot.startsAt);
    if (pulledBand !== undefined)
      changedByPulledBand[pulledBand] = (changedByPulledBand[pulledBand] ?? 0) + 1;
    const found = { startsAt: slot.startsAt, byEventTypeList: closedByEventTypeList.has(slot) };
    const boundSeconds = stalenessBoundSeconds(previousCoverage, found, now);
    if (boundSeconds === null) continue;
    const key = `${band} ${boundSeconds}`;
    const entry = staleness.get(key) ?? { band, boundSeconds, changes: 0 };
    entry.changes += 1;
    staleness.set(key, entry);
  }
  return {
    ...changes,
    closedBy,
    bookingsInferred: bookings.length,
    events,
    changedByBand,
    changedByPulledBand,
    changeStaleness: [...staleness.values()],
  };
}

/**
 * A ticket for a pull that is about to start. Tickets order pulls by when they began, whatever the clocks
 * of the machines that run them: a commit holding an older ticket than the last committed one is refused.
 */
export async function beginPull(prisma: PrismaClient, connectionId: string): Promise<number> {
  const [row] = await prisma.$queryRaw<{ pull_sequence: number }[]>`
    UPDATE connection SET pull_sequence = pull_sequence + 1 WHERE id = ${connectionId}::uuid
    RETURNING pull_sequence`;
  if (!row) throw new ConnectionNotFoundError(connectionId);
  return row.pull_sequence;
}

/** The upstream ids of the connection's event types stored as enabled now. */
export async function enabledEventTypeIds(prisma: PrismaClient, connectionId: string): Promise<Set<string>> {
  const rows = await prisma.eventType.findMany({
    where: { connectionId, validTo: null, enabled: true },
    select: { upstreamEventId: true },
  });
  return new Set(rows.map((row) => row.upstreamEventId));
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

export async function commitSuccessfulSync(
  prisma: PrismaClient,
  sync: SuccessfulSync,
): Promise<SnapshotChanges> {
  const { connectionId, snapshot, run, now } = sync;
  return prisma.$transaction(
    async (tx) => {
      // Serialises commits of one connection: a job recovered from a stalled worker may overlap the original.
      const [locked] = await tx.$queryRaw<
        {
          committed_pull_sequence: number;
          last_good_sync_at: Date | null;
          band_state: unknown;
          pull_coverage: unknown;
        }[]
      >`
        SELECT committed_pull_sequence, last_good_sync_at, band_state, pull_coverage
        FROM connection WHERE id = ${connectionId}::uuid FOR UPDATE`;
      if (!locked) throw new ConnectionNotFoundError(connectionId);
      // Turns are not enough: a pull that began before the last committed one saw older upstream state, and
      // committing it would reopen what the newer pull saw booked.
      if (run.pullSequence !== undefined && run.pullSequence < locked.committed_pull_sequence) {
        await tx.syncRun.create({ data: runRow(sync, 'superseded', {}) });
        return SUPERSEDED;
      }
      // This commit moves the feed version itself, with its own clock: the triggers that move it for other
      // writers of slots and event types stand aside for this transaction (feed_views migration).
      await tx.$executeRaw`SELECT set_config('slotfeed.moves_feed_version', 'on', true)`;
      const profileChanged = await commitProfile(tx, connectionId, snapshot.profile, now);
      const eventTypesChanged = await commitEventTypes(tx, connectionId, snapshot.eventTypes, now);
      const overviewsChanged = await commitOverviews(tx, connectionId, snapshot, now);
      const previousCoverage = readPullCoverage(locked.pull_coverage);
      const slots = await commitSlots(tx, connectionId, snapshot, now, previousCoverage);
      const oldestPrevious = oldestPulledAt(previousCoverage, pulledRanges(snapshot));

      const changes: Omit<SnapshotChanges, 'webhookDeliveries'> = {
        slotsOpened: slots.toOpen.length,
        slotsClosed: slots.toClose.length,
        slotsRescheduled: slots.toReschedule.length,
        eventTypesChanged,
        overviewsChanged,
        profileChanged,
        feedVersionMoved:
          profileChanged ||
          eventTypesChanged > 0 ||
          slots.toOpen.length + slots.toClose.length + slots.toReschedule.length > 0,
        closedBy: slots.closedBy,
        bookingsInferred: slots.bookingsInferred,
        changedByBand: slots.changedByBand,
        changedByPulledBand: slots.changedByPulledBand,
        changeStaleness: slots.changeStaleness,
        stalenessBoundSeconds:
          oldestPrevious === null ? null : (now.getTime() - oldestPrevious.getTime()) / 1000,
        previousGoodSyncAt: locked.last_good_sync_at,
        superseded: false,
      };

      const next =
        typeof sync.next === 'function'
          ? sync.next(locked.band_state, changes)
          : { nextSyncAt: sync.next, bandState: locked.band_state };
      await tx.connection.update({
        where: { id: connectionId },
        data: {
          email: snapshot.profile.email,
          displayName: snapshot.profile.name,
          timezone: snapshot.profile.timezone,
          nextSyncAt: next.nextSyncAt,
          bandState: next.bandState as Prisma.InputJsonValue,
          // Pulls are dated by when they began: a change after the pull read a date may have been missed.
          pullCoverage: storedPullCoverage(
            coverageAfterPull(previousCoverage, pulledRanges(snapshot), run.startedAt, now),
          ),
          lastSyncAt: now,
          lastGoodSyncAt: now,
          lastSyncOutcome: 'succeeded',
          lastSyncError: null,
          ...(run.pullSequence !== undefined ? { committedPullSequence: run.pullSequence } : {}),
          ...(changes.feedVersionMoved ? { feedVersion: { increment: 1 }, feedChangedAt: now } : {}),
        },
      });
      await tx.syncRun.create({ data: runRow(sync, 'succeeded', changes) });
      // Kept on the connection: pruning old runs must not move it (the bookings report counts from it).
      await tx.connection.updateMany({
        where: { id: connectionId, firstSyncedAt: null },
        data: { firstSyncedAt: now },
      });
      // Last: numbering the deliveries locks each endpoint's row until the commit, and a team's endpoint is
      // shared by every member's commits (webhook-outbox.ts).
      const deliveries = await recordWebhookEvents(tx, connectionId, slots.events, now);
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
