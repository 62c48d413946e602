// What a sync's commit reads, what it is given, and what it writes, as plain data. The commit (snapshots.ts)
// reads `CommitPrevious` under the connection's lock, hands it with the pull's `SnapshotInput` to the pure
// planner (plan-commit.ts), and writes the `CommitPlan` it gets back: every decision (which versions are new,
// which slots close and why, what webhook endpoints hear, how changes count by band and how stale they may
// have been) is the planner's, every statement the commit's.
import type { DateBand } from '../lib/date-bands.js';
import type { CloseReason } from './close-reasons.js';
import type { PullCoverage, StoredPullCoverage } from './pull-coverage.js';
import type { FetchedSlot, StoredOpenSlot } from './slot-diff.js';
import type { WebhookEvent } from './webhook-events.js';

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
  /** Absent: the pull did not read the profile (sync/pull-plan.ts); the stored one stands. */
  profile?: { payload: unknown; email: string; name: string; timezone: string };
  /**
   * Every event type the account has, enabled or not; an event type missing here was deleted. Absent: the
   * pull did not read them, and the stored ones stand (what the slots it pulled were asked for).
   */
  eventTypes?: EventTypeSnapshot[];
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

/** What the commit read of the connection's current state, under its lock. */
export interface CommitPrevious {
  profile: { id: bigint; contentHash: string } | null;
  eventTypes: readonly { id: bigint; upstreamEventId: string; contentHash: string; enabled: boolean }[];
  overviews: readonly { id: bigint; upstreamEventId: string; band: string; contentHash: string }[];
  openSlots: readonly StoredOpenSlot[];
  pullCoverage: PullCoverage;
}

/** Who and when: the connection committed, the commit's clock, and when its pull began. */
export interface CommitContext {
  connectionId: string;
  now: Date;
  /** What the pull saw happened after this (its coverage is dated by it). */
  pullStartedAt: Date;
}

/** Versions to close (their valid_to set to the commit's time) and new versions to write. */
export interface NewVersions<T> {
  close: bigint[];
  create: T[];
}

/** What a commit decides from the pull, before the bookings it infers and what the connection row says. */
export type PlannedChanges = Omit<
  SnapshotChanges,
  'bookingsInferred' | 'webhookDeliveries' | 'previousGoodSyncAt' | 'superseded'
>;

export interface CommitPlan {
  profile: NewVersions<{ contentHash: string; payload: unknown }>;
  eventTypes: NewVersions<EventTypeSnapshot & { contentHash: string }>;
  overviews: NewVersions<{ upstreamEventId: string; band: string; contentHash: string; payload: unknown }>;
  slots: {
    open: FetchedSlot[];
    close: { id: bigint; reason: CloseReason }[];
    reschedule: { id: bigint; endsAt: Date; sequence: number }[];
  };
  /** Some slot closed as taken: the commit infers bookings after its slot writes (in SQL: what is still open counts). */
  infersBookings: boolean;
  /** availability.changed, when availability did; booking.inferred follow from the bookings (commitEvents). */
  availabilityChanged: WebhookEvent | undefined;
  changes: PlannedChanges;
  /** connection.pull_coverage after this pull. */
  pullCoverage: StoredPullCoverage;
}
