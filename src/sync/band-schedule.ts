// When each band of one connection is due, and how a connection's own activity moves that. Kept on the
// connection row as `band_state` (one entry per band name); `next_sync_at` is the earliest due band, so the
// scheduler's query for due connections is unchanged.
//
// Adaptation: a band whose pull saw a change is pulled sooner next time (its interval factor halves, down to
// the fastest bound); one that saw none is pulled a little later (×1.25, up to the slowest bound). Bookings
// cluster by account, so the busy accounts converge on the fast bound and the quiet ones on the slow, and the
// calls go where the changes are.
import { z } from 'zod';
import type { AdaptBounds, CadenceBand } from '../config/sync-bands.js';

export const bandPullStateSchema = z.object({
  /** When the band is next due (ISO instant). */
  dueAt: z.iso.datetime({ offset: true }),
  /** This connection's multiple of the band's configured interval. */
  factor: z.number().positive(),
  /** Upstream calls the band's last pull cost (overviews and slot lists): what the budget expects it to cost. */
  calls: z.number().int().min(0),
});
export const bandStateSchema = z.record(z.string(), bandPullStateSchema);
export type BandPullState = z.infer<typeof bandPullStateSchema>;
export type BandState = z.infer<typeof bandStateSchema>;

/** What one pull of one band saw. */
export interface BandPullResult {
  name: string;
  /** Slots opened, closed or moved on the band's dates; null when there was nothing to compare with. */
  changes: number | null;
  calls: number;
}

const FASTER_AFTER_CHANGE = 0.5;
const SLOWER_AFTER_QUIET = 1.25;

/** A stored state that is not the expected shape (hand-edited, an older version) counts as never pulled. */
export function readBandState(stored: unknown): BandState {
  const parsed = bandStateSchema.safeParse(stored);
  return parsed.success ? parsed.data : {};
}

/** The bands due at `now`: those never pulled, and those whose time has come. Nearest first. */
export function dueBands(bands: readonly CadenceBand[], state: BandState, now: Date): CadenceBand[] {
  return bands.filter((band) => {
    const pulled = state[band.name];
    return pulled === undefined || Date.parse(pulled.dueAt) <= now.getTime();
  });
}

function nextFactor(previous: number, changes: number | null, bounds: AdaptBounds): number {
  if (changes === null) return Math.min(bounds.slowest, Math.max(bounds.fastest, previous));
  const factor = changes > 0 ? previous * FASTER_AFTER_CHANGE : previous * SLOWER_AFTER_QUIET;
  return Math.min(bounds.slowest, Math.max(bounds.fastest, factor));
}

export interface ScheduleAfterPull {
  state: BandState;
  /** The earliest due band: the connection's next_sync_at. */
  nextSyncAt: Date;
}

/**
 * The state after a successful pull of `pulled`: each pulled band is due again after its interval × its new
 * factor, moved by up to ± `jitterRatio` so connections that started together drift apart. Bands not pulled
 * keep their time; bands no longer configured are dropped.
 */
export function scheduleAfterPull(
  bands: readonly CadenceBand[],
  previous: BandState,
  pulled: readonly BandPullResult[],
  now: Date,
  bounds: AdaptBounds,
  jitterRatio: number,
  random: () => number,
): ScheduleAfterPull {
  const byName = new Map(pulled.map((result) => [result.name, result]));
  const state: BandState = {};
  for (const band of bands) {
    const result = byName.get(band.name);
    const before = previous[band.name];
    if (!result) {
      if (before) state[band.name] = before;
      continue;
    }
    const factor = nextFactor(before?.factor ?? 1, result.changes, bounds);
    const jitter = (random() * 2 - 1) * jitterRatio;
    const dueMs = now.getTime() + Math.round(band.intervalSeconds * factor * (1 + jitter) * 1000);
    state[band.name] = { dueAt: new Date(dueMs).toISOString(), factor, calls: result.calls };
  }
  return { state, nextSyncAt: earliestDue(bands, state, now) };
}

/** The earliest due time of any band; `now` when a band was never pulled. */
export function earliestDue(bands: readonly CadenceBand[], state: BandState, now: Date): Date {
  let earliest = Infinity;
  for (const band of bands) {
    const pulled = state[band.name];
    earliest = Math.min(earliest, pulled ? Date.parse(pulled.dueAt) : now.getTime());
  }
  return new Date(earliest === Infinity ? now.getTime() : earliest);
}
