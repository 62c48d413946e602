// A past for a fresh demo, so every report and chart has something to show the first time. The demo clock
// (demo-clock.ts) starts weeks back, the accounts connect then, and the clock is stepped forward a few syncs a
// day: between two syncs simulated people book near-term slots (booking-pattern.ts) through the simulator's
// control API, and each sync round goes through the sync queue to the daemon's own worker, like any other
// sync. Nothing is written to slotfeed's tables by hand: the bookings reports show are the ones the syncs
// inferred. The caller brings the clock back to the present afterwards.
import type { QueueOrShards } from '../lib/queue-shards.js';
import type { CadenceBand } from '../config/sync-bands.js';
import { coerceError } from '../lib/coerce-error.js';
import { derivePrng, type Prng, type SimulatorControl, type SimUserDetails } from '../simulator/index.js';
import type { SyncProgressStore } from '../store/sync-progress.js';
import { enqueueBandSyncs, enqueueSyncs, type SyncJobData } from '../sync/queues.js';
import {
  arrivalTimes,
  meanBookingsPer,
  pickNearTermOffer,
  poisson,
  weeklyMinutes,
  type Offer,
} from './booking-pattern.js';
import type { DemoClock } from './demo-clock.js';

const DAY_MS = 86_400_000;
/** How far ahead the simulated people look for a slot. */
const BOOKING_WINDOW_MS = 14 * DAY_MS;
/**
 * The week ahead, where the simulated people book most (the nearer a slot, the likelier): its bands are pulled
 * every round, the rest of the horizon on the first round of each week only, as the live scheduler pulls far
 * dates less often than near ones. A whole pull is some 75 calls and one of the week ahead some 30.
 */
const NEAR_DAYS = 7;
/**
 * Days between two whole pulls. Past the week ahead only a rare booking changes anything (none is made more than
 * BOOKING_WINDOW_MS ahead), and every date comes into the week ahead, pulled twice a day, before it passes: a
 * booking out there is inferred all the same, a few days later at most. Weekly rather than daily, the history
 * made a third fewer calls and took a fifth less CPU, with the same bookings inferred (docs/demo.md).
 */
const WHOLE_PULL_EVERY_DAYS = 7;
/** Chance that an account has one of its upcoming bookings cancelled between two syncs. */
const CANCEL_CHANCE = 0.1;

/** Three weeks, two syncs a day: its timings in docs/demo.md, "How long it takes". */
export const DEMO_HISTORY = { days: 21, syncsPerDay: 2 } as const;

export interface HistoryPlan {
  days: number;
  syncsPerDay: number;
  /** When the accounts connect; their first syncs are the history's first round. */
  startsAt: Date;
  stepMs: number;
  /** Sync rounds after the first, one every stepMs. The live daemon's sync at the present comes next. */
  rounds: number;
  /**
   * Rounds an earlier run recorded (the accounts' first syncs included) before it stopped: a history resumed
   * from its record (history-record.ts) goes on from the last of them. 0 for a fresh history.
   */
  roundsDone: number;
  /** Resumed from a record rather than planned afresh: its accounts connected in an earlier run. */
  resumed: boolean;
}

export function planHistory(now: Date, days: number, syncsPerDay: number): HistoryPlan {
  const stepMs = DAY_MS / syncsPerDay;
  return {
    days,
    syncsPerDay,
    startsAt: new Date(now.getTime() - days * DAY_MS),
    stepMs,
    rounds: days * syncsPerDay - 1,
    roundsDone: 0,
    resumed: false,
  };
}

/**
 * The rest of a history an earlier run left unfinished after `roundsDone` rounds: the same start and step, its
 * rounds up to `now` (a day later, a day's more of them), resumed from the last round it recorded.
 */
export function resumeHistoryPlan(
  record: { startsAt: string; stepMs: number; syncsPerDay: number; days: number; roundsDone: number },
  now: Date,
): HistoryPlan {
  const startsAt = new Date(record.startsAt);
  const stepsToNow = Math.floor((now.getTime() - startsAt.getTime()) / record.stepMs);
  return {
    days: record.days,
    syncsPerDay: record.syncsPerDay,
    startsAt,
    stepMs: record.stepMs,
    rounds: Math.max(stepsToNow - 1, record.roundsDone - 1, 0),
    roundsDone: record.roundsDone,
    resumed: true,
  };
}

/** Where the clock stands when a history begins: when the accounts connect, or its last recorded round. */
export function historyResumesAt(plan: HistoryPlan): Date {
  return new Date(plan.startsAt.getTime() + Math.max(plan.roundsDone - 1, 0) * plan.stepMs);
}

export interface HistoryDeps {
  clock: DemoClock;
  control: SimulatorControl;
  progress: Pick<SyncProgressStore, 'syncedSince' | 'inferredBookings'>;
  syncQueue: QueueOrShards<SyncJobData>;
  maxAttempts: number;
  /** The daemon's cadence bands (SYNC_BANDS within the horizon): a round pulls the near ones, or all. */
  bands: readonly CadenceBand[];
  out: { write(text: string): void; isTTY: boolean; columns?: number };
  stopRequested: () => boolean;
  seed: number;
  /** Longest one sync round may take before the history stops where it is. Default 60 s. */
  roundTimeoutMs?: number;
  /** Told after each round how many are recorded, the accounts' first syncs included (history-record.ts). */
  recorded?: (roundsDone: number) => Promise<void>;
}

export interface HistoryAccount {
  /** The simulator's user id. */
  userId: string;
  connectionId: string;
}

export interface HistorySummary {
  /** Sync rounds completed, the accounts' first syncs included. */
  rounds: number;
  booked: number;
  cancelled: number;
  /** Bookings slotfeed's syncs inferred from the slots they saw taken. */
  inferred: number;
  /** Why the history ended before its last round, if it did. */
  stoppedEarly?: string;
}

interface Booker {
  userId: string;
  eventIds: string[];
  meanPerRound: number;
  booked: Offer[];
}

function bookerFor(user: SimUserDetails, prng: Prng, stepMs: number): Booker {
  const bookable = user.event_types.filter((e) => e.enabled);
  const meanDuration =
    bookable.reduce((sum, e) => sum + e.duration_minutes, 0) / Math.max(1, bookable.length);
  return {
    userId: user.id,
    eventIds: bookable.map((e) => e.event_id),
    meanPerRound: meanBookingsPer({
      weeklyMinutes: weeklyMinutes(user.weekly_hours),
      meanDurationMinutes: meanDuration,
      share: 0.25 + 0.25 * prng.next(),
      periodMs: stepMs,
    }),
    booked: [],
  };
}

/** Books one near-term slot of `booker` open at `nowMs`; false when nothing is open. */
function bookOne(control: SimulatorControl, prng: Prng, booker: Booker, nowMs: number): boolean {
  const to = new Date(nowMs + BOOKING_WINDOW_MS).toISOString();
  const offers = booker.eventIds.flatMap((eventId) =>
    control
      .slotsFor(eventId, new Date(nowMs).toISOString(), to)
      .map((start) => ({ eventId, startMs: Date.parse(start) })),
  );
  const offer = pickNearTermOffer(prng, offers, nowMs);
  if (offer === undefined) return false;
  control.book(offer.eventId, new Date(offer.startMs).toISOString());
  booker.booked.push(offer);
  return true;
}

function cancelOne(control: SimulatorControl, prng: Prng, booker: Booker, nowMs: number): boolean {
  const upcoming = booker.booked.filter((b) => b.startMs > nowMs);
  if (upcoming.length === 0) return false;
  const booking = prng.pick(upcoming);
  control.free(booking.eventId, new Date(booking.startMs).toISOString());
  booker.booked.splice(booker.booked.indexOf(booking), 1);
  return true;
}

/**
 * The bands sync round `round` pulls (1 = the round after the accounts connected): every band on the first
 * round of a week, else those that start within the week ahead; undefined means every band (a whole sync).
 */
export function bandsOfRound(
  bands: readonly CadenceBand[],
  round: number,
  syncsPerDay: number,
): string[] | undefined {
  if (round % (syncsPerDay * WHOLE_PULL_EVERY_DAYS) === 0) return undefined;
  const near = bands.filter((band) => band.fromDay < NEAR_DAYS).map((band) => band.name);
  return near.length === 0 || near.length === bands.length ? undefined : near;
}

/** Enqueues a sync of each connection and waits until each has finished one at or after `at`. */
async function syncRound(
  deps: HistoryDeps,
  connectionIds: string[],
  at: Date,
  bands: string[] | undefined,
): Promise<void> {
  if (bands === undefined) {
    await enqueueSyncs(deps.syncQueue, connectionIds, deps.maxAttempts);
  } else {
    const picks = connectionIds.map((connectionId) => ({ connectionId, bands }));
    await enqueueBandSyncs(deps.syncQueue, picks, deps.maxAttempts, `demo-history-${at.getTime()}`);
  }
  await untilSynced(deps, connectionIds, at);
}

async function untilSynced(deps: HistoryDeps, connectionIds: string[], at: Date): Promise<void> {
  const deadline = Date.now() + (deps.roundTimeoutMs ?? 60_000);
  for (;;) {
    const done = await deps.progress.syncedSince(connectionIds, at);
    if (done === connectionIds.length) return;
    if (Date.now() > deadline) {
      throw new Error(
        `the syncs of ${at.toISOString()} did not finish within ${deps.roundTimeoutMs ?? 60_000} ms`,
      );
    }
    // Short: a round takes a fraction of a second, and a whole history is dozens of them.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Seconds between two progress lines when the output is not a terminal (a log, CI, a pipe). */
export const PROGRESS_LINE_INTERVAL_MS = 5_000;

/**
 * A terminal gets one line rewritten in place every round; other output a whole line on the first round and
 * then one every PROGRESS_LINE_INTERVAL_MS, so a log shows the history moving without a line per round.
 */
function progressReporter(
  deps: HistoryDeps,
  startedAt: number,
  now: () => number = performance.now.bind(performance),
) {
  let lastLineAt: number | undefined;
  return (at: Date, round: number, rounds: number) => {
    const line = `Recording the history: ${at.toISOString().slice(0, 10)} (sync round ${round} of ${rounds})`;
    if (deps.out.isTTY) {
      deps.out.write(`\r\u001b[2K${line.slice(0, Math.max(20, (deps.out.columns ?? 100) - 1))}`);
      return;
    }
    const t = now();
    if (lastLineAt !== undefined && t - lastLineAt < PROGRESS_LINE_INTERVAL_MS) return;
    lastLineAt = t;
    deps.out.write(`${line}, ${((t - startedAt) / 1000).toFixed(0)} s so far\n`);
  };
}

/**
 * Replays `plan` for accounts that connected at plan.startsAt (their first syncs are queued by the connect
 * flow). Leaves the clock at the last round; a stop request or a round that does not finish ends it early.
 */
export async function replayHistory(
  deps: HistoryDeps,
  plan: HistoryPlan,
  accounts: readonly HistoryAccount[],
): Promise<HistorySummary> {
  const { clock, control } = deps;
  const prng = derivePrng(deps.seed, 'demo-history');
  const users = control.listUsers();
  const bookers = accounts.flatMap((a) => {
    const user = users.find((u) => u.id === a.userId);
    return user ? [bookerFor(user, prng, plan.stepMs)] : [];
  });
  const connectionIds = accounts.map((a) => a.connectionId);
  const summary: HistorySummary = { rounds: plan.roundsDone, booked: 0, cancelled: 0, inferred: 0 };
  const showProgress = progressReporter(deps, performance.now());

  try {
    if (plan.roundsDone === 0) {
      // A fresh history's first round is the connect flow's syncs; a resumed one that never saw them asks.
      if (plan.resumed) await enqueueSyncs(deps.syncQueue, connectionIds, deps.maxAttempts);
      await untilSynced(deps, connectionIds, plan.startsAt);
      summary.rounds = 1;
      await deps.recorded?.(summary.rounds);
    }
    for (let round = summary.rounds; round <= plan.rounds && !deps.stopRequested(); round++) {
      const fromMs = plan.startsAt.getTime() + (round - 1) * plan.stepMs;
      const at = new Date(fromMs + plan.stepMs);
      showProgress(at, round + 1, plan.rounds + 1);
      // Everyone's bookings and cancellations of this step, in the order they happen.
      const actions = bookers
        .flatMap((booker) => [
          ...arrivalTimes(prng, poisson(prng, booker.meanPerRound), fromMs, at.getTime()).map((ms) => ({
            ms,
            booker,
            cancel: false,
          })),
          ...(prng.chance(CANCEL_CHANCE)
            ? arrivalTimes(prng, 1, fromMs, at.getTime()).map((ms) => ({ ms, booker, cancel: true }))
            : []),
        ])
        .sort((a, b) => a.ms - b.ms);
      for (const action of actions) {
        clock.travelTo(new Date(action.ms));
        if (action.cancel) {
          if (cancelOne(control, prng, action.booker, action.ms)) summary.cancelled++;
        } else if (bookOne(control, prng, action.booker, action.ms)) {
          summary.booked++;
        }
      }
      clock.travelTo(at);
      await syncRound(deps, connectionIds, at, bandsOfRound(deps.bands, round, plan.syncsPerDay));
      summary.rounds = round + 1;
      await deps.recorded?.(summary.rounds);
    }
  } catch (thrown: unknown) {
    // A control call refused (the slot rule is the simulator's) or a round that hung: what was recorded
    // stays, and the demo goes on in the present.
    summary.stoppedEarly = coerceError(thrown).message;
  } finally {
    if (deps.out.isTTY) deps.out.write('\r\u001b[2K');
  }
  summary.inferred = await deps.progress.inferredBookings(connectionIds);
  return summary;
}

const minute = (instant: Date) => instant.toISOString().slice(0, 16).replace('T', ' ');

/** The demo's line before the accounts connect: whether a history is recorded, and from when. */
export function describeHistoryPlan(plan: HistoryPlan | undefined, days: number): string {
  if (plan === undefined) {
    return days > 0
      ? 'History: the database already holds connections; its history is kept, none is added'
      : 'History: none asked for';
  }
  if (plan.resumed) {
    return (
      `History: the last run stopped after ${plan.roundsDone} sync rounds of ${plan.rounds + 1}; recording the ` +
      `rest, from ${minute(historyResumesAt(plan))} UTC up to now`
    );
  }
  const often = plan.syncsPerDay === 2 ? 'twice' : `${plan.syncsPerDay} times`;
  return (
    `History: a fresh database, so the accounts connect ${plan.days} days back, at ${minute(plan.startsAt)} UTC ` +
    `(one clock for the simulator and slotfeed), and sync ${often} a day up to now`
  );
}

/** The demo's line once the history is recorded (or ended early). */
export function describeHistory(plan: HistoryPlan, history: HistorySummary, elapsedMs: number): string {
  const total = plan.rounds + 1;
  const thisRun = plan.resumed ? ` (${history.rounds - plan.roundsDone} in this run)` : '';
  const recorded =
    `History recorded in ${(elapsedMs / 1000).toFixed(1)} s: ${history.rounds} sync rounds of ` +
    `${total}${thisRun}, ${history.booked} simulated bookings (${history.cancelled} cancelled), ` +
    `${history.inferred} inferred by the syncs; the clock is back at the present.`;
  const lines = [recorded];
  if (history.stoppedEarly !== undefined) lines.push(`The history ended early: ${history.stoppedEarly}`);
  if (history.rounds < total) {
    lines.push(
      'The history is unfinished: the next run of the demo records the rest (delete its data directory to ' +
        'start afresh).',
    );
  }
  return lines.join('\n');
}
