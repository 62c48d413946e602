// When each part of an account was last looked at by a successful pull: the list of event types (every pull
// reads it whole) and, for slot start times, the instants whose dates a pull asked for. A change a pull finds
// happened after the previous look at the same part, so the time since that look bounds how stale the change
// was. With partial syncs that look is not the previous sync: a far date found changed by a far-band pull was
// last looked at by the far band's previous pull (or a full one), hours before the near pull of 10 minutes ago.
//
// Kept as a step function over instants, not per band: a date moves from a far band to a nearer one as days
// pass (and a band's dates are dates in the account's zone, which may change), so what a band's last pull
// covered says nothing exact about a date now in it. Each pull overwrites the instants of the dates it asked
// for, [start of its first date, start of the day after its last) in the account's zone, with the time it
// began (anything it saw happened after that, and anything after that it may have missed). Steps entirely in
// the past are dropped (slots that started change nothing a bound measures), so the list stays a few steps:
// about one per band, plus one when a band's dates moved on since its last pull. Kept in store/: it is what
// connection.pull_coverage holds, read and written by the sync commit (snapshots.ts) under the connection's lock.
import { dateAfter, startOfDateIn } from '../lib/zone-days.js';
import { z } from 'zod';

const instant = z.iso.datetime({ offset: true });

/** As stored in connection.pull_coverage. */
export const pullCoverageSchema = z.object({
  /** When the pull that last read the event types began. */
  eventTypesPulledAt: instant.nullable(),
  /**
   * Consecutive steps: slot starts before `until` (and at or after the previous step's `until`; the first
   * step reaches back indefinitely) were last pulled by the pull that began at `pulledAt` (null: never).
   * The last step's `until` is null: it reaches forward indefinitely.
   */
  slotStarts: z.array(z.object({ until: instant.nullable(), pulledAt: instant.nullable() })),
});
export type StoredPullCoverage = z.infer<typeof pullCoverageSchema>;

interface Step {
  untilMs: number;
  pulledAtMs: number | null;
}

export interface PullCoverage {
  eventTypesPulledAtMs: number | null;
  /** Ordered by untilMs; the last one's untilMs is Infinity. */
  steps: Step[];
}

/** A range of slot starts one pull looked at: [fromMs, untilMs). */
export interface PulledRange {
  fromMs: number;
  untilMs: number;
}

export const NEVER_PULLED: PullCoverage = {
  eventTypesPulledAtMs: null,
  steps: [{ untilMs: Infinity, pulledAtMs: null }],
};

/** A stored value that is not the expected shape (absent, hand-edited) counts as never pulled. */
export function readPullCoverage(stored: unknown): PullCoverage {
  const parsed = pullCoverageSchema.safeParse(stored);
  if (!parsed.success || parsed.data.slotStarts.length === 0) {
    return {
      ...NEVER_PULLED,
      eventTypesPulledAtMs: parsed.success ? msOrNull(parsed.data.eventTypesPulledAt) : null,
    };
  }
  const steps = parsed.data.slotStarts.map((step) => ({
    untilMs: step.until === null ? Infinity : Date.parse(step.until),
    pulledAtMs: msOrNull(step.pulledAt),
  }));
  const ordered = steps.every((step, i) => i === 0 || steps[i - 1]!.untilMs < step.untilMs);
  if (!ordered || steps.at(-1)!.untilMs !== Infinity) return NEVER_PULLED;
  return { eventTypesPulledAtMs: msOrNull(parsed.data.eventTypesPulledAt), steps };
}

export function storedPullCoverage(coverage: PullCoverage): StoredPullCoverage {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    eventTypesPulledAt: iso(coverage.eventTypesPulledAtMs),
    slotStarts: coverage.steps.map((step) => ({
      until: step.untilMs === Infinity ? null : iso(step.untilMs),
      pulledAt: iso(step.pulledAtMs),
    })),
  };
}

function msOrNull(iso: string | null): number | null {
  return iso === null ? null : Date.parse(iso);
}

/** The slot starts of consecutive dates (YYYY-MM-DD) in `zone`: from the first's midnight to the next day's. */
export function rangeOfDates(zone: string, dates: readonly string[]): PulledRange {
  return {
    fromMs: startOfDateIn(dates[0]!, zone),
    untilMs: startOfDateIn(dateAfter(dates.at(-1)!, 1), zone),
  };
}

/** Every slot start: what a pull that is the whole picture looked at. */
export const EVERY_SLOT_START: PulledRange = { fromMs: -Infinity, untilMs: Infinity };

/** When the slot start `startsAt` was last pulled, or null when it never was. */
export function slotStartPulledAt(coverage: PullCoverage, startsAt: Date): Date | null {
  const ms = startsAt.getTime();
  const step = coverage.steps.find((s) => ms < s.untilMs);
  const pulledAtMs = step?.pulledAtMs ?? null;
  return pulledAtMs === null ? null : new Date(pulledAtMs);
}

/** The earliest time any part of `ranges` (or the event types) was last pulled; null when none ever was. */
export function oldestPulledAt(coverage: PullCoverage, ranges: readonly PulledRange[]): Date | null {
  let oldest = coverage.eventTypesPulledAtMs ?? Infinity;
  let fromMs = -Infinity;
  for (const step of coverage.steps) {
    const overlaps = ranges.some((range) => range.fromMs < step.untilMs && fromMs < range.untilMs);
    if (overlaps && step.pulledAtMs !== null) oldest = Math.min(oldest, step.pulledAtMs);
    fromMs = step.untilMs;
  }
  return oldest === Infinity ? null : new Date(oldest);
}

/**
 * The coverage after a successful pull that began at `pulledAt` and looked at `ranges`: those instants are
 * now last pulled then, the rest as before; the event types too when it read them (a scheduled pull reads
 * them on their own cadence, sync/pull-plan.ts). Steps that ended by `now` are dropped, and neighbours pulled
 * at the same time merged.
 */
export function coverageAfterPull(
  previous: PullCoverage,
  ranges: readonly PulledRange[],
  pulledAt: Date,
  now: Date,
  readEventTypes = true,
): PullCoverage {
  const at = pulledAt.getTime();
  // Every boundary of the old steps and the new ranges; each piece between two takes one value.
  const cuts = new Set<number>();
  for (const step of previous.steps) cuts.add(step.untilMs);
  for (const range of ranges) cuts.add(range.fromMs).add(range.untilMs);
  const bounds = [...cuts].filter((ms) => ms > -Infinity).sort((a, b) => a - b);
  const steps: Step[] = [];
  let fromMs = -Infinity;
  for (const untilMs of bounds) {
    const inRange = ranges.some((range) => range.fromMs <= fromMs && untilMs <= range.untilMs);
    const pulledAtMs = inRange ? at : previous.steps.find((step) => fromMs < step.untilMs)!.pulledAtMs;
    const last = steps.at(-1);
    if (untilMs <= now.getTime()) {
      // Entirely in the past: folded into the first step that is not.
    } else if (last && last.pulledAtMs === pulledAtMs) last.untilMs = untilMs;
    else steps.push({ untilMs, pulledAtMs });
    fromMs = untilMs;
  }
  return { eventTypesPulledAtMs: readEventTypes ? at : previous.eventTypesPulledAtMs, steps };
}

/** One slot change a pull found: its start, and whether the event type list showed it (disabled, removed). */
export interface FoundChange {
  startsAt: Date;
  byEventTypeList: boolean;
}

/**
 * How stale `change` may have been when stored at `now`: the time since the previous look at what showed it
 * (its date's slots, or the list of event types). Null when that was never looked at: nothing to be stale
 * against (a first sync, a date new to the horizon).
 */
export function stalenessBoundSeconds(previous: PullCoverage, change: FoundChange, now: Date): number | null {
  const since = change.byEventTypeList
    ? previous.eventTypesPulledAtMs
    : (slotStartPulledAt(previous, change.startsAt)?.getTime() ?? null);
  return since === null ? null : (now.getTime() - since) / 1000;
}
