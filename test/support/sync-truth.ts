// What the simulator says a correct sync must store, computed from its own ground truth, and what slotfeed
// stored, read back from Postgres: tests compare the two.
import { DateTime } from 'luxon';
import { variables } from '../../src/config.js';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { bandsWithin, parseCadenceBands, type CadenceBand } from '../../src/config/sync-bands.js';
import type { RunningSimulator, SimUserDetails } from '../../src/simulator/index.js';
import { readOpenDates } from '../../src/store/pull-basis.js';
import { datesByBand } from '../../src/sync/cadence-bands.js';
import { horizonFrom } from '../../src/sync/horizon-windows.js';

export function simUser(sim: RunningSimulator, email: string): SimUserDetails {
  const user = sim.control.listUsers().find((u) => u.email === email);
  if (!user) throw new Error(`no simulated user ${email}`);
  return user;
}

export interface ExpectedSync {
  /** "eventId start end" lines, sorted. */
  slots: string[];
  /**
   * Upstream calls a minimal full sync makes: 2 + Σ over enabled event types of (windows + available dates),
   * each cadence band asked for in windows of its own.
   */
  calls: number;
  availableDates: Map<string, string[]>;
}

const DEFAULT_BANDS = (() => {
  const parsed = parseCadenceBands(variables.SYNC_BANDS.default!);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.bands;
})();

/** Overview windows one full sync asks for per event type: each band's dates, 58 days at most a window. */
export function windowsPerEventType(
  horizonDays: number,
  bands: readonly CadenceBand[] = DEFAULT_BANDS,
): number {
  return bandsWithin(bands, horizonDays).reduce(
    (sum, band) => sum + Math.ceil((Math.min(band.toDay, horizonDays) - band.fromDay) / 58),
    0,
  );
}

export function expectedSync(
  sim: RunningSimulator,
  email: string,
  now: Date,
  horizonDays: number,
  bands: readonly CadenceBand[] = DEFAULT_BANDS,
): ExpectedSync {
  const user = simUser(sim, email);
  const start = DateTime.fromJSDate(now, { zone: user.timezone }).startOf('day');
  const end = start.plus({ days: horizonDays });
  const slots: string[] = [];
  const availableDates = new Map<string, string[]>();
  let calls = 2;
  for (const eventType of user.event_types.filter((e) => e.enabled)) {
    const starts = sim.control.slotsFor(eventType.event_id, start.toUTC().toISO()!, end.toUTC().toISO()!);
    const dates = [
      ...new Set(starts.map((s) => DateTime.fromISO(s, { zone: user.timezone }).toISODate()!)),
    ].sort();
    availableDates.set(eventType.event_id, dates);
    calls += windowsPerEventType(horizonDays, bands) + dates.length;
    for (const s of starts) {
      const startsAt = new Date(s);
      const endsAt = new Date(startsAt.getTime() + eventType.duration_minutes * 60_000);
      slots.push(`${eventType.event_id} ${startsAt.toISOString()} ${endsAt.toISOString()}`);
    }
  }
  return { slots: slots.sort(), calls, availableDates };
}

/**
 * Open slots as stored. Real-clock tests pass the instant they compare at: a slot that starts between the sync
 * and the comparison is still stored but no longer in the simulator's truth (which offers only future starts).
 */
export async function storedOpenSlots(
  prisma: PrismaClient,
  connectionId: string,
  startingAfter?: Date,
): Promise<string[]> {
  const rows = await prisma.slot.findMany({
    where: { connectionId, goneAt: null, ...(startingAfter ? { startsAt: { gt: startingAfter } } : {}) },
  });
  return rows.map((r) => `${r.upstreamEventId} ${r.startsAt.toISOString()} ${r.endsAt.toISOString()}`).sort();
}

export async function snapshotRowCounts(prisma: PrismaClient) {
  const [eventTypes, profiles, overviews, slots] = await Promise.all([
    prisma.eventType.count(),
    prisma.profile.count(),
    prisma.overview.count(),
    prisma.slot.count(),
  ]);
  return { eventTypes, profiles, overviews, slots };
}

/** Calls the simulator saw from one user's tokens, without the OAuth login itself. */
export function apiCallsOf(sim: RunningSimulator, userId: string): number {
  const counts = sim.control.callCountsByUser()[userId] ?? {};
  return Object.entries(counts)
    .filter(([endpoint]) => endpoint.startsWith('GET /') && endpoint !== 'GET /login')
    .reduce((sum, [, n]) => sum + n, 0);
}

/**
 * The dates of `bandNames` as a scheduled pull at `now` cuts them (sync/cadence-bands.ts): counted in the
 * dates the store holds an open slot on, the rest by calendar distance.
 */
export async function bandDatesNow(
  prisma: PrismaClient,
  connectionId: string,
  bands: readonly CadenceBand[],
  horizonDays: number,
  bandNames: readonly string[],
  now: Date,
  zone: string,
): Promise<string[]> {
  const horizon = horizonFrom(now, zone, horizonDays);
  const until = DateTime.fromISO(horizon.lastDate, { zone }).plus({ days: 1 }).toJSDate();
  const open = await readOpenDates(prisma, connectionId, zone, now, until);
  const byBand = datesByBand(horizon, bandsWithin(bands, horizonDays), open);
  return bandNames.flatMap((name) => byBand.get(name) ?? []).sort();
}
