// The scheduler's promises as properties, over random SYNC_BANDS, horizons, budgets, connections, queued jobs and
// failures: ticks simulated with the functions the real tick uses (config.ts's bands, the bank's accrual,
// allocateCalls, and the band schedule a sync commit writes), the queue and the worker modelled as BullMQ
// behaves for them (a connection has at most one job; a pick for a connection with one is dropped; a failed
// attempt waits out a backoff and leaves the band state as it was). A connection pulled before starts with a
// state for every band of SYNC_BANDS as written, those beyond the horizon too: the band_state an older config
// (a longer horizon) left behind, which must neither be due nor come back after a pull. Each connection's
// account has weekly hours of any shape (any days, ranges crossing midnight, disabled dates): each pull cuts its
// bands' dates as the worker does (cadence-bands.ts, counted in the dates with hours still to come), and the
// first N of those dates are always in the N-day near band.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { loadConfig, variables } from '../../src/config.js';
import { dueBands, scheduleAfterPull, type BandState } from '../../src/sync/band-schedule.js';
import { allocateCalls, bankedCalls, bankCapacity, type DueConnection } from '../../src/sync/call-budget.js';
import { ACCOUNT_CALLS, accountReadDue } from '../../src/sync/pull-plan.js';
import { parseCadenceBands } from '../../src/config/sync-bands.js';
import { bandsPulled } from '../../src/sync/pull-snapshot.js';
import { datesByBand } from '../../src/sync/cadence-bands.js';
import { horizonFrom, type Horizon } from '../../src/sync/horizon-windows.js';
import { DateTime } from 'luxon';

const START = new Date('2026-03-02T09:00:00Z').getTime();
const MAX_ATTEMPTS = 3;

const BASE_ENV = {
  DATABASE_URL: 'postgres://localhost/x',
  CALENDBOOK_BASE_URL: 'http://127.0.0.1:4010/api/v1',
  CALENDBOOK_AUTH_URL: 'http://127.0.0.1:4010/auth',
  CALENDBOOK_CLIENT_ID: 'id',
  CALENDBOOK_CLIENT_SECRET: 'secret',
};

/** SYNC_BANDS text: up to three bands of growing days ahead, then the rest of the horizon. */
const bandsText = fc
  .tuple(
    fc.array(fc.record({ days: fc.integer({ min: 1, max: 10 }), minutes: fc.constantFrom(10, 30, 40, 60) }), {
      maxLength: 3,
    }),
    fc.constantFrom(60, 180, 360),
  )
  .map(([near, restMinutes]) => {
    let until = 0;
    const entries = near.map(({ days, minutes }) => `${(until += days)}d=${minutes}m`);
    return [...entries, `*=${restMinutes}m`].join(',');
  });

/** Weekly hours of any shape: ranges by weekday (0 = Monday), start and length in minutes; a range may cross midnight. */
const weeklyHoursArb = fc.array(
  fc.record({
    weekday: fc.integer({ min: 0, max: 6 }),
    startMinute: fc.integer({ min: 0, max: 1439 }),
    minutes: fc.integer({ min: 15, max: 1440 }),
  }),
  { maxLength: 8 },
);
const connectionArb = fc.record({
  /** Never synced (a new connection), or with a state for each band as written, as if pulled before. */
  pulledBefore: fc.boolean(),
  offsetsMinutes: fc.array(fc.integer({ min: -400, max: 400 }), { minLength: 4, maxLength: 4 }),
  calls: fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 4, maxLength: 4 }),
  /** A job of it is in the queue when the simulation starts (ticks until a worker takes it). */
  queuedFor: fc.option(fc.integer({ min: 0, max: 4 })),
  /** When its profile and event types were last read (if it was pulled before). */
  accountReadMinutesAgo: fc.integer({ min: 0, max: 120 }),
  hours: weeklyHoursArb,
  /** Days ahead the account disabled (days off, holidays). */
  disabledDays: fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { maxLength: 6 }),
  zone: fc.constantFrom('Europe/Berlin', 'America/New_York', 'Pacific/Auckland', 'UTC'),
});

/** What each job does, taken in turn: fail (and back off) or succeed, after waiting for a worker. */
const outcomeArb = fc.record({
  fails: fc.boolean(),
  busyTicks: fc.integer({ min: 0, max: 3 }),
  changes: fc.integer({ min: 0, max: 3 }),
});

type WeeklyRanges = { weekday: number; startMinute: number; minutes: number }[];

/**
 * The horizon's dates people can still book at `now`: those some range covers (a range crossing midnight
 * covers the next date too) after `now`, and not disabled. What the store's open slots say, in a world where
 * nothing is fully booked.
 */
function openDatesOf(
  hours: WeeklyRanges,
  disabled: ReadonlySet<number>,
  horizon: Horizon,
  now: Date,
  zone: string,
) {
  const local = DateTime.fromJSDate(now, { zone });
  const nowMinute = local.hour * 60 + local.minute;
  const open = new Set<string>();
  horizon.dates.forEach((date, day) => {
    if (disabled.has(day)) return;
    const weekday = DateTime.fromISO(date).weekday - 1;
    const previous = (weekday + 6) % 7;
    // The minutes of this date each range covers: [from, until).
    const pieces = hours.flatMap((r) => {
      const own = r.weekday === weekday ? [[r.startMinute, Math.min(1440, r.startMinute + r.minutes)]] : [];
      const spill =
        r.weekday === previous && r.startMinute + r.minutes > 1440
          ? [[0, r.startMinute + r.minutes - 1440]]
          : [];
      return [...own, ...spill];
    });
    if (pieces.some(([, until]) => day > 0 || until! > nowMinute)) open.add(date);
  });
  return open;
}

interface SimConnection {
  id: string;
  state: BandState;
  nextSyncAt: number;
  /** When a pull last read its account (SYNC_ACCOUNT_INTERVAL's cadence); null: never. */
  accountReadAt: number | null;
  hours: WeeklyRanges;
  zone: string;
  /** Disabled dates, YYYY-MM-DD in its zone. */
  disabled: Set<string>;
}

interface SimJob {
  /** Absent: every band (a whole sync). */
  bands: string[] | undefined;
  ticksLeft: number;
  attempts: number;
}

function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('the scheduler, over random bands, budgets, queued jobs, failures and weekly hours', () => {
  it('never makes a band beyond the horizon due, never blocks on a queued job, never overspends, and keeps the first bookable days near', () => {
    fc.assert(
      fc.property(
        // The defaults, as shipped, and random bands.
        fc.oneof(fc.constant(variables.SYNC_BANDS.default!), bandsText),
        fc.integer({ min: 1, max: 30 }),
        fc.oneof(fc.constant(0), fc.double({ min: 0.05, max: 6, noNaN: true })),
        fc.integer({ min: 10, max: 120 }),
        fc.array(connectionArb, { minLength: 1, maxLength: 10 }),
        fc.array(outcomeArb, { minLength: 1, maxLength: 20 }),
        fc.integer(),
        fc.constantFrom(variables.SYNC_ACCOUNT_INTERVAL.default!, '1m', '2h'),
        (bandsEnv, horizonDays, perSecond, tickSeconds, connectionSpecs, outcomes, seed, accountInterval) => {
          const { sync } = loadConfig(
            {
              ...BASE_ENV,
              SYNC_BANDS: bandsEnv,
              SYNC_HORIZON_DAYS: String(horizonDays),
              SYNC_CALL_BUDGET_PER_SECOND: String(perSecond),
              SYNC_ACCOUNT_INTERVAL: accountInterval,
            },
            ['sync'],
          );
          // What "beyond the horizon" means: a band whose first day is not among the horizon's days.
          const parsed = parseCadenceBands(bandsEnv);
          if (!parsed.ok) throw new Error(parsed.error);
          const reachable = new Set(parsed.bands.filter((b) => b.fromDay < horizonDays).map((b) => b.name));
          const random = seededRandom(seed);
          let nextOutcome = 0;
          const outcome = () => outcomes[nextOutcome++ % outcomes.length]!;

          const connections: SimConnection[] = connectionSpecs.map((spec, i) => ({
            id: `c${i}`,
            state: spec.pulledBefore
              ? Object.fromEntries(
                  parsed.bands.map((band, b) => [
                    band.name,
                    {
                      dueAt: new Date(START + spec.offsetsMinutes[b]! * 60_000).toISOString(),
                      factor: 1,
                      calls: spec.calls[b]!,
                    },
                  ]),
                )
              : {},
            nextSyncAt: START + Math.min(0, ...spec.offsetsMinutes) * 60_000,
            accountReadAt: spec.pulledBefore ? START - spec.accountReadMinutesAgo * 60_000 : null,
            hours: spec.hours,
            zone: spec.zone,
            disabled: new Set(
              spec.disabledDays.map((d) =>
                DateTime.fromMillis(START, { zone: spec.zone }).plus({ days: d }).toISODate()!,
              ),
            ),
          }));
          const accountCallsOf = (connection: SimConnection, at: Date) =>
            accountReadDue(connection.accountReadAt, at.getTime(), sync.accountIntervalSeconds)
              ? ACCOUNT_CALLS
              : 0;
          const queue = new Map<string, SimJob>();
          connectionSpecs.forEach((spec, i) => {
            if (spec.queuedFor !== null) {
              queue.set(`c${i}`, { bands: undefined, ticksLeft: spec.queuedFor, attempts: 0 });
            }
          });

          const capacity = bankCapacity(sync.callBudgetPerSecond);
          let stored: { calls: number; atMs: number } | undefined;
          let spentInAll = 0;
          let dearestPick = 0;

          for (let t = 0; t < 40; t += 1) {
            const now = new Date(START + t * tickSeconds * 1000);
            // The worker: jobs taken by now finish; a failure backs off and leaves the band state alone.
            for (const [id, job] of [...queue]) {
              if (job.ticksLeft > 0) {
                job.ticksLeft -= 1;
                continue;
              }
              const connection = connections.find((c) => c.id === id)!;
              const result = outcome();
              if (result.fails) {
                job.attempts += 1;
                if (job.attempts < MAX_ATTEMPTS) {
                  job.ticksLeft = result.busyTicks + 1;
                } else {
                  queue.delete(id);
                  connection.nextSyncAt = now.getTime() + sync.intervalSeconds * 1000;
                }
                continue;
              }
              queue.delete(id);
              // The worker pulls the bands asked for that the horizon holds, as pull-snapshot.ts chooses them,
              // each on its dates: counted in the dates the account can still be booked on (a whole sync: by
              // calendar, as it knows none yet).
              const pulled = bandsPulled(sync.bands, sync.horizonDays, job.bands ?? 'all');
              const horizon = horizonFrom(now, connection.zone, sync.horizonDays);
              const dayOf = new Map(horizon.dates.map((date, day) => [date, day]));
              const disabledDays = new Set([...connection.disabled].flatMap((d) => dayOf.get(d) ?? []));
              const open = openDatesOf(connection.hours, disabledDays, horizon, now, connection.zone);
              const byBand = datesByBand(horizon, sync.bands, job.bands === undefined ? undefined : open);
              // Every date of the horizon in exactly one band, and no date in a band beyond it.
              expect([...byBand.values()].flat().sort()).toEqual(horizon.dates);
              // The first N dates people can book are in the N-day near band; each open date in the band of
              // its rank among them, each other date in the band of its calendar distance.
              const near = sync.bands[0]!;
              const firstOpen = horizon.dates.filter((date) => open.has(date)).slice(0, near.toDay);
              if (job.bands !== undefined) {
                for (const date of firstOpen)
                  expect({ date, near: byBand.get(near.name)!.includes(date) }).toEqual({ date, near: true });
              }
              let rank = 0;
              for (const [day, date] of horizon.dates.entries()) {
                const counted = job.bands !== undefined && open.size > 0 && open.has(date) ? rank : day;
                if (job.bands !== undefined && open.has(date)) rank += 1;
                const band = sync.bands.find((b) => counted >= b.fromDay && counted < b.toDay)!;
                expect({ date, band: byBand.get(band.name)!.includes(date) }).toEqual({ date, band: true });
              }
              const next = scheduleAfterPull(
                sync.bands,
                connection.state,
                pulled.map((band) => ({
                  name: band.name,
                  changes: result.changes,
                  // What its dates cost asked for directly, one event type: what the budget expects next time.
                  calls: byBand.get(band.name)!.length,
                })),
                now,
                sync.adapt,
                sync.jitterRatio,
                random,
              );
              // A band beyond the horizon has no state after a pull: a leftover entry is dropped, not kept.
              expect(Object.keys(next.state).filter((name) => !reachable.has(name))).toEqual([]);
              // A pull that leaves no band due leaves the connection not due: no re-sync at every tick.
              if (dueBands(sync.bands, next.state, now).length === 0) {
                expect(next.nextSyncAt.getTime()).toBeGreaterThan(now.getTime());
              }
              connection.state = next.state;
              connection.nextSyncAt = next.nextSyncAt.getTime();
              // A whole sync reads the account, and so does one whose cadence for it has come.
              if (job.bands === undefined || accountCallsOf(connection, now) > 0) {
                connection.accountReadAt = now.getTime();
              }
            }

            // The tick.
            for (const connection of connections) {
              for (const band of dueBands(sync.bands, connection.state, now)) {
                expect({ band: band.name, reachable: reachable.has(band.name) }).toEqual({
                  band: band.name,
                  reachable: true,
                });
              }
            }
            const due: DueConnection[] = connections
              .filter((c) => c.nextSyncAt <= now.getTime())
              .map((c) => ({
                id: c.id,
                bandState: c.state,
                dueSince: new Date(c.nextSyncAt),
                queued: queue.has(c.id),
                accountCalls: accountCallsOf(c, now),
              }));
            const queuedAtTick = new Set(queue.keys());
            const available = bankedCalls(stored, now, sync.callBudgetPerSecond, capacity);
            const allocation = allocateCalls(sync.bands, sync.horizonDays, due, available, capacity, now);
            let spent = 0;
            for (const pick of allocation.picks) {
              expect({ pick: pick.connectionId, queued: queuedAtTick.has(pick.connectionId) }).toEqual({
                pick: pick.connectionId,
                queued: false,
              });
              for (const band of pick.bands) expect(reachable.has(band)).toBe(true);
              const result = outcome();
              queue.set(pick.connectionId, { bands: pick.bands, ticksLeft: result.busyTicks, attempts: 0 });
              spent += pick.calls;
              dearestPick = Math.max(dearestPick, pick.calls);
            }
            // Budget: within what is available, or over it by one pull when the bank was full.
            if (spent > 0 && spent > available) {
              expect(available).toBeGreaterThanOrEqual(capacity);
              expect(spent - available).toBeLessThanOrEqual(
                Math.max(...allocation.picks.map((p) => p.calls)),
              );
            }
            spentInAll += spent;
            expect(spentInAll).toBeLessThanOrEqual(
              capacity + sync.callBudgetPerSecond * tickSeconds * t + dearestPick,
            );
            // No starvation while budget is unspent: what waits is led by a pull the budget left cannot pay
            // for (and that could not overdraw a full bank), never by a connection whose job is queued.
            for (const waiting of allocation.waiting) {
              expect(queuedAtTick.has(waiting.connectionId)).toBe(false);
              expect(reachable.has(waiting.band)).toBe(true);
            }
            const head = allocation.waiting[0];
            if (head !== undefined) {
              const picked = allocation.picks.some((p) => p.connectionId === head.connectionId);
              const headCost = head.calls + (picked ? 0 : head.accountCalls);
              expect(available - spent).toBeLessThan(headCost);
              expect(available < capacity || spent > available).toBe(true);
            }
            if (spent > 0) stored = { calls: available - spent, atMs: now.getTime() };
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
