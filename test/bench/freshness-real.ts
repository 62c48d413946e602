// Benchmark: the freshness comparison again, with nothing counted in place of done: slotfeed's scheduler ticks
// and its worker syncs against the simulator over HTTP and commits to Postgres, every part on one injected
// clock that the loop moves on a tick at a time once the tick's syncs have committed (time compressed as far
// as the machine goes). Smaller than the 10,000-connection run (the calls are real), and the check on it:
// calls per connection-hour and staleness per band should agree with what the counted run says at its size.
import { derivePrng } from '../../src/simulator/index.js';
import { enqueueDueSyncs } from '../../src/sync/scheduler.js';
import { DATE_BANDS, dateBandOf, type DateBand } from '../../src/lib/date-bands.js';
import { createSyncHarness, FakeClock, type SyncHarness } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { check, type BenchSection } from './bench-result.js';
import {
  accountText,
  activityRate,
  adaptText,
  FIXED,
  freshnessTargets,
  leadDays,
  type Schedule,
  type ScheduleResult,
  figuresOf,
  p95Within72h,
} from './freshness.js';
import { FRONTIER_INPUTS } from './frontier.js';
import { DateTime } from 'luxon';

export interface RealFreshnessOptions {
  connections: number;
  warmupHours: number;
  measureHours: number;
  bookingsPerDay: number;
}

const TICK_SECONDS = 30;
const START = '2026-04-06T00:00:00.000Z';

/** One schedule, run for real: connect every account, then tick, book and sync until the end. */
async function runReal(
  schedule: Schedule,
  options: RealFreshnessOptions,
): Promise<ScheduleResult & { calls: number }> {
  const clock = new FakeClock(new Date(START));
  const h: SyncHarness = await createSyncHarness('freshness_real', {
    clock,
    simulator: { users: options.connections, eventTypesPerUser: 3, seed: 19 },
    env: {
      SYNC_BANDS: schedule.bands,
      SYNC_ADAPT_FACTORS: adaptText(schedule.adapt),
      SYNC_ACCOUNT_INTERVAL: accountText(schedule.accountIntervalSeconds),
      SYNC_CALL_BUDGET_PER_SECOND: '0',
      WORKER_CONCURRENCY: '8',
      SYNC_FETCH_CONCURRENCY: '4',
    },
  });
  try {
    const users = h.sim.control.listUsers();
    for (const user of users) await h.connect(user.email);
    await h.startRoles(['worker']);
    const deps = h.services.tickDeps;
    // The same bookings for every schedule: one seeded stream, made through the simulator as time passes.
    const prng = derivePrng(19, 'freshness-real');
    const startMs = Date.parse(START);
    const measureFrom = startMs + options.warmupHours * 3_600_000;
    const endMs = measureFrom + options.measureHours * 3_600_000;
    const arrivals = users
      .flatMap((user, index) => {
        const perMs = activityRate(prng, options.bookingsPerDay) / 86_400_000;
        const times: { atMs: number; index: number }[] = [];
        for (let t = startMs - Math.log(Math.max(prng.next(), 1e-12)) / perMs; t < endMs;) {
          times.push({ atMs: Math.round(t / 1000) * 1000, index });
          t -= Math.log(Math.max(prng.next(), 1e-12)) / perMs;
        }
        return times;
      })
      .sort((a, b) => a.atMs - b.atMs);
    let next = 0;
    let measuring = false;
    const succeeded = () => h.clients.prisma.syncRun.count({ where: { outcome: 'succeeded' } });
    for (let now = startMs; now < endMs; now += TICK_SECONDS * 1000) {
      // Bookings up to this tick, each at its own time on the simulator's clock.
      for (; next < arrivals.length && arrivals[next]!.atMs <= now; next++) {
        const { atMs, index } = arrivals[next]!;
        clock.set(new Date(atMs).toISOString());
        const user = users[index]!;
        const eventType = prng.pick(user.event_types);
        const day = DateTime.fromMillis(atMs, { zone: user.timezone })
          .startOf('day')
          .plus({ days: leadDays(prng) });
        const offered = h.sim.control.slotsFor(
          eventType.event_id,
          day.toUTC().toISO()!,
          day.plus({ days: 1 }).toUTC().toISO()!,
        );
        if (offered.length > 0) h.sim.control.book(eventType.event_id, prng.pick(offered));
      }
      clock.set(new Date(now).toISOString());
      if (!measuring && now >= measureFrom) {
        h.sim.control.resetCallCounts();
        measuring = true;
      }
      const before = await succeeded();
      const tick = await enqueueDueSyncs(deps);
      if (tick.enqueued > 0) {
        await waitFor(succeeded, (n) => n >= before + tick.enqueued, {
          timeoutMs: 600_000,
          intervalMs: 20,
          what: `the tick's ${tick.enqueued} syncs`,
        });
      }
    }
    const calls = Object.entries(h.sim.control.callCounts())
      .filter(([endpoint]) => endpoint.startsWith('GET /') && endpoint !== 'GET /login')
      .reduce((sum, [, n]) => sum + n, 0);
    check((await h.clients.prisma.syncRun.count({ where: { outcome: 'failed' } })) === 0, 'a sync failed');

    // Staleness: the store's time for the booked slot − the simulator's record of the booking.
    const staleness = Object.fromEntries(DATE_BANDS.map((b) => [b.name, [] as number[]])) as Record<
      DateBand,
      number[]
    >;
    let unseen = 0;
    const byUser = new Map(users.map((u) => [u.id, u]));
    const slots = await h.clients.prisma.slot.findMany({
      where: { closeReason: 'taken' },
      select: { upstreamEventId: true, startsAt: true, goneAt: true },
    });
    const goneAt = new Map(
      slots.map((s) => [`${s.upstreamEventId} ${s.startsAt.getTime()}`, s.goneAt!.getTime()]),
    );
    for (const change of h.sim.control.changes()) {
      if (change.kind !== 'booked' || change.atMs < measureFrom || !byUser.has(change.userId)) continue;
      const stored = goneAt.get(`${change.eventId} ${change.startMs}`);
      if (stored === undefined) {
        if (change.startMs <= endMs) unseen++;
        continue;
      }
      staleness[dateBandOf(new Date(change.startMs), new Date(change.atMs))].push(
        (stored - change.atMs) / 1000,
      );
    }
    for (const values of Object.values(staleness)) values.sort((a, b) => a - b);
    return {
      calls,
      callsPerConnectionHour: calls / (options.connections * options.measureHours),
      staleness,
      unseen,
      peakMinuteShare: 0,
      pullsByBand: {},
    };
  } finally {
    await h.close();
  }
}

/**
 * Each configuration of `frontier` for real (the fixed schedule first, the reference), `chosen` with the
 * issue's targets against it.
 */
export async function benchRealFreshness(
  options: RealFreshnessOptions,
  frontier: readonly Schedule[],
  chosen: Schedule,
): Promise<BenchSection[]> {
  const inputsOf = (schedule: Schedule) => ({
    [FRONTIER_INPUTS.bands]: schedule.bands,
    [FRONTIER_INPUTS.adapt]: adaptText(schedule.adapt),
    [FRONTIER_INPUTS.account]: accountText(schedule.accountIntervalSeconds),
    [FRONTIER_INPUTS.run]: 'real syncs',
    connections: options.connections,
    'event types each': 3,
    'warm-up hours': options.warmupHours,
    'simulated hours measured': options.measureHours,
    'bookings per connection-day (mean)': options.bookingsPerDay,
    'budget calls/s': 'none (0)',
  });
  const figures = (result: ScheduleResult & { calls: number }, fixed: ScheduleResult) => {
    const { 'busiest minute, share of the budget': _, ...rest } = figuresOf(result);
    return {
      ...rest,
      'upstream GET calls measured': result.calls,
      'calls vs fixed':
        Math.round((result.callsPerConnectionHour / fixed.callsPerConnectionHour) * 100) / 100,
      'p95 within 72 h, min': Math.round((p95Within72h(result) / 60) * 10) / 10,
    };
  };
  const fixed = await runReal(FIXED, options);
  const sections: BenchSection[] = [];
  for (const schedule of [FIXED, ...frontier.filter((s) => s.name !== FIXED.name)]) {
    const result = schedule === FIXED ? fixed : await runReal(schedule, options);
    console.log(`freshness-real: ${schedule.name} done`);
    const isChosen = schedule.name === chosen.name;
    sections.push({
      benchmark: `freshness, real syncs: ${schedule.name}${isChosen ? ', the default' : ''}`,
      inputs: inputsOf(schedule),
      figures: figures(result, fixed),
      ...(isChosen ? { targets: freshnessTargets(result, fixed) } : {}),
    });
  }
  return sections;
}
