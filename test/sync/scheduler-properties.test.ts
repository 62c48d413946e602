// The scheduler's promises as properties, over random SYNC_BANDS, horizons, budgets, connections, queued jobs and
// failures: ticks simulated with the functions the real tick uses (config.ts's bands, the bank's accrual,
// allocateCalls, and the band schedule a sync commit writes), the queue and the worker modelled as BullMQ
// behaves for them (a connection has at most one job; a pick for a connection with one is dropped; a failed
// attempt waits out a backoff and leaves the band state as it was). A connection pulled before starts with a
// state for every band of SYNC_BANDS as written, those beyond the horizon too: the band_state an older config
// (a longer horizon) left behind, which must neither be due nor come back after a pull.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { loadConfig, variables } from '../../src/config.js';
import { dueBands, scheduleAfterPull, type BandState } from '../../src/sync/band-schedule.js';
import { allocateCalls, bankedCalls, bankCapacity, type DueConnection } from '../../src/sync/call-budget.js';
import { ACCOUNT_CALLS, accountReadDue } from '../../src/sync/pull-plan.js';
import { parseCadenceBands } from '../../src/config/sync-bands.js';
import { bandsPulled } from '../../src/sync/pull-snapshot.js';

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

const connectionArb = fc.record({
  /** Never synced (a new connection), or with a state for each band as written, as if pulled before. */
  pulledBefore: fc.boolean(),
  offsetsMinutes: fc.array(fc.integer({ min: -400, max: 400 }), { minLength: 4, maxLength: 4 }),
  calls: fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 4, maxLength: 4 }),
  /** A job of it is in the queue when the simulation starts (ticks until a worker takes it). */
  queuedFor: fc.option(fc.integer({ min: 0, max: 4 })),
  /** When its profile and event types were last read (if it was pulled before). */
  accountReadMinutesAgo: fc.integer({ min: 0, max: 120 }),
});

/** What each job does, taken in turn: fail (and back off) or succeed, after waiting for a worker. */
const outcomeArb = fc.record({
  fails: fc.boolean(),
  busyTicks: fc.integer({ min: 0, max: 3 }),
  changes: fc.integer({ min: 0, max: 3 }),
});

interface SimConnection {
  id: string;
  state: BandState;
  nextSyncAt: number;
  /** When a pull last read its account (SYNC_ACCOUNT_INTERVAL's cadence); null: never. */
  accountReadAt: number | null;
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

describe('the scheduler, over random bands, budgets, queued jobs and failures', () => {
  it('never makes a band beyond the horizon due, never blocks on a queued job, and never overspends', () => {
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
              // The worker pulls the bands asked for that the horizon holds, as pull-snapshot.ts chooses them.
              const pulled = bandsPulled(sync.bands, sync.horizonDays, job.bands ?? 'all');
              const next = scheduleAfterPull(
                sync.bands,
                connection.state,
                pulled.map((band) => ({
                  name: band.name,
                  changes: result.changes,
                  calls: result.busyTicks * 3,
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
