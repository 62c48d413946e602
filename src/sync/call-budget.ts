// A budget, not a schedule: each tick the scheduler has so many upstream calls to spend (SYNC_CALL_BUDGET
// per second since the last tick, banked up to half a minute's worth) and spends them where staleness costs
// most. A due band's claim is how late it is in units of its own interval: a near band (10 minutes) five
// minutes overdue is as late as a far one (3 hours) ninety minutes overdue, so near bands go first, and when
// the budget is short every band falls behind in proportion to its interval: the far ones by hours, the near
// ones by minutes, none forever. A band never pulled (a new connection) goes before all: it has nothing to
// show. What does not fit waits for the next tick, and the metrics say how long it has waited. The upstream
// rate limiter stays the hard ceiling; this only decides who goes first.
import type { RedisClient } from '../lib/redis-connection.js';
import { dueBands, type BandState } from './band-schedule.js';
import type { CadenceBand } from '../config/sync-bands.js';
import { bandRank } from './cadence-bands.js';
import { ACCOUNT_CALLS } from './pull-plan.js';

export interface DueConnection {
  id: string;
  bandState: BandState;
  /** Its next_sync_at: since when it has been due. */
  dueSince: Date;
  /**
   * A sync job of it waits (a retry in backoff, a busy worker pool) or runs already: not a candidate. Its pick
   * would be dropped at enqueue, and a round stopped behind it would leave everyone else waiting.
   */
  queued?: boolean;
  /**
   * What a sync of it asks before any band: the profile and the event types (ACCOUNT_CALLS) when their
   * cadence has come or it was never synced, else nothing (pull-plan.ts). Absent: ACCOUNT_CALLS.
   */
  accountCalls?: number;
}

export interface BandPick {
  connectionId: string;
  bands: string[];
  /** The calls the pick is expected to cost. */
  calls: number;
}

export interface Deferred {
  /** Due (connection, band) pairs left for a later tick. */
  count: number;
  /** How long the longest waiting of them has been due. */
  oldestOverdueSeconds: number;
}

/** A due (connection, band) pair the round left for a later tick. */
export interface WaitingPull {
  connectionId: string;
  band: string;
  /** The band's expected calls (without the account's calls of a connection not picked). */
  calls: number;
  /** The account's calls a sync of the connection would add (DueConnection.accountCalls). */
  accountCalls: number;
}

export interface Allocation {
  picks: BandPick[];
  /** What the round left, in the order it ranked them: the first is the pull the budget could not pay for. */
  waiting: WaitingPull[];
  /** By band name; every configured band appears, with 0 when nothing of it waits. */
  deferred: Record<string, Deferred>;
}

interface Candidate {
  connectionId: string;
  band: CadenceBand;
  rank: number;
  dueMs: number;
  /** How late the band is in units of its own interval; Infinity for a band never pulled. */
  lateness: number;
  calls: number;
  /** The connection's calls before any band, paid once by its first band picked. */
  accountCalls: number;
}

/**
 * What a band is expected to cost: its last pull's calls, or before any pull one overview window and one
 * slot list for each of its dates (one event type; the first pull corrects it).
 */
function expectedCalls(band: CadenceBand, state: BandState, horizonDays: number): number {
  const known = state[band.name]?.calls;
  if (known !== undefined) return known;
  return 1 + Math.min(band.toDay, horizonDays) - band.fromDay;
}

/**
 * Since when a band has been due: its own due time; or, for a band never pulled (a new connection) or pulled
 * on a sync asked for by hand, since the connection became due. Not `now`: a new connection would then be
 * the least overdue at every tick, and never get its first sync under a short budget.
 */
function dueSinceMs(connection: DueConnection, band: string, now: Date): number {
  const dueAt = connection.bandState[band]?.dueAt;
  const ownMs = dueAt === undefined ? Infinity : Date.parse(dueAt);
  return ownMs <= now.getTime() ? ownMs : connection.dueSince.getTime();
}

/**
 * The bands of a due connection to pull: those due; or, when none is, every band. Its next_sync_at was then
 * moved by hand (a reconnect, an enable, an operator's UPDATE), which asks for a whole sync.
 */
function bandsToPull(bands: readonly CadenceBand[], state: BandState, now: Date): readonly CadenceBand[] {
  const due = dueBands(bands, state, now);
  return due.length > 0 ? due : bands;
}

/**
 * Chooses what to pull of `bands` (config.sync.bands: clipped to the horizon already) with `available` calls,
 * among the due connections that have no job queued, latest first (then longest due, then nearest band).
 * Strictly in that order: the first pair that does not fit stops the round (a cheaper pair further down must
 * not jump the queue). When the bank is full (`available` ≥ `capacity`) one pair may overdraw it: otherwise a
 * band dearer than the whole bank would never go. The bank then refills from below zero.
 */
export function allocateCalls(
  bands: readonly CadenceBand[],
  horizonDays: number,
  due: readonly DueConnection[],
  available: number,
  capacity: number,
  now: Date,
): Allocation {
  const candidates: Candidate[] = due
    .filter((connection) => !connection.queued)
    .flatMap((connection) =>
      bandsToPull(bands, connection.bandState, now).map((band) => ({
        connectionId: connection.id,
        band,
        rank: bandRank(bands, band.name),
        dueMs: dueSinceMs(connection, band.name, now),
        lateness:
          connection.bandState[band.name] === undefined
            ? Infinity
            : (now.getTime() - dueSinceMs(connection, band.name, now)) / 1000 / band.intervalSeconds,
        calls: expectedCalls(band, connection.bandState, horizonDays),
        accountCalls: connection.accountCalls ?? ACCOUNT_CALLS,
      })),
    );
  candidates.sort((a, b) => b.lateness - a.lateness || a.dueMs - b.dueMs || a.rank - b.rank);

  const picks = new Map<string, BandPick>();
  const deferred: Record<string, Deferred> = Object.fromEntries(
    bands.map((band) => [band.name, { count: 0, oldestOverdueSeconds: 0 }]),
  );
  const waiting: WaitingPull[] = [];
  let spent = 0;
  let stopped = false;
  let overdrawn = false;
  for (const candidate of candidates) {
    const pick = picks.get(candidate.connectionId);
    const cost = candidate.calls + (pick ? 0 : candidate.accountCalls);
    const fits = spent + cost <= available;
    // A full bank may go below zero once, for a pull dearer than all it can hold.
    const overdraws: boolean = !fits && !overdrawn && available >= capacity;
    if (!stopped && (fits || overdraws)) {
      overdrawn ||= overdraws;
      spent += cost;
      if (pick) {
        pick.bands.push(candidate.band.name);
        pick.calls += candidate.calls;
      } else {
        picks.set(candidate.connectionId, {
          connectionId: candidate.connectionId,
          bands: [candidate.band.name],
          calls: cost,
        });
      }
      continue;
    }
    stopped = true;
    waiting.push({
      connectionId: candidate.connectionId,
      band: candidate.band.name,
      calls: candidate.calls,
      accountCalls: candidate.accountCalls,
    });
    const ofBand = deferred[candidate.band.name]!;
    ofBand.count += 1;
    ofBand.oldestOverdueSeconds = Math.max(
      ofBand.oldestOverdueSeconds,
      Math.max(0, (now.getTime() - candidate.dueMs) / 1000),
    );
  }
  return { picks: [...picks.values()], waiting, deferred };
}

export interface CallBudget {
  /** The calls available at `now`: what accrued since the last tick, on top of what was left. */
  available(now: Date): Promise<number>;
  /** Takes `calls` from what is available (after the picks were enqueued). */
  spend(calls: number, now: Date): Promise<void>;
  readonly capacity: number;
}

/** Seconds of budget that may be banked while there is nothing due to spend it on. */
const BANKED_SECONDS = 30;

/** The most calls the bank holds; Infinity for 0, no budget (as a rate limit of 0 is no limit). */
export function bankCapacity(perSecond: number): number {
  return perSecond === 0 ? Infinity : perSecond * BANKED_SECONDS;
}

/** What the bank held after the last spend. */
export interface StoredBank {
  calls: number;
  atMs: number;
}

/** The calls available at `now`: what was left at the last spend and what accrued since, up to `capacity`. */
export function bankedCalls(
  stored: StoredBank | undefined,
  now: Date,
  perSecond: number,
  capacity: number,
): number {
  if (capacity === Infinity) return Infinity;
  if (stored === undefined) return capacity;
  const accrued = (Math.max(0, now.getTime() - stored.atMs) / 1000) * perSecond;
  return Math.min(capacity, stored.calls + accrued);
}

/**
 * The bank lives in Redis, so several scheduler processes share one budget. Ticks run one at a time (one
 * job scheduler, one tick job each), so a read-then-write is enough.
 */
export function createRedisCallBudget(redis: RedisClient, key: string, perSecond: number): CallBudget {
  const capacity = bankCapacity(perSecond);
  // No budget: everything due goes.
  if (capacity === Infinity) return { capacity, available: async () => Infinity, spend: async () => {} };
  const read = async (now: Date) => {
    const stored = await redis.get(key);
    const parsed = stored ? (JSON.parse(stored) as { calls?: unknown; atMs?: unknown }) : {};
    const bank =
      typeof parsed.calls === 'number' && typeof parsed.atMs === 'number'
        ? { calls: parsed.calls, atMs: parsed.atMs }
        : undefined;
    return bankedCalls(bank, now, perSecond, capacity);
  };
  return {
    capacity,
    available: read,
    async spend(calls, now) {
      const left = (await read(now)) - calls;
      await redis.set(key, JSON.stringify({ calls: left, atMs: now.getTime() }));
    },
  };
}
