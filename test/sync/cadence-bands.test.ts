// Band scheduling and budget allocation as plain functions: what SYNC_BANDS means, when each band of a
// connection is due, how a connection's own activity moves that, and who gets the calls when they are short.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { loadConfig } from '../../src/config.js';
import { dueBands, earliestDue, scheduleAfterPull, type BandState } from '../../src/sync/band-schedule.js';
import { allocateCalls, type DueConnection } from '../../src/sync/call-budget.js';
import { ACCOUNT_CALLS } from '../../src/sync/pull-plan.js';
import { parseCadenceBands, type CadenceBand } from '../../src/config/sync-bands.js';
import { datesByBand, datesOfBand } from '../../src/sync/cadence-bands.js';
import { horizonFrom } from '../../src/sync/horizon-windows.js';

function bandsOf(text: string): CadenceBand[] {
  const parsed = parseCadenceBands(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.bands;
}

const BANDS = bandsOf('3d=10m,7d=30m,*=2h');
const NOW = new Date('2026-03-02T09:00:00Z');
const at = (minutes: number) => new Date(NOW.getTime() + minutes * 60_000);
const ADAPT = { fastest: 0.5, slowest: 2 };

describe('SYNC_BANDS', () => {
  it('reads bands nearest first, each named by the days ahead it covers', () => {
    expect(BANDS).toEqual([
      { name: 'days 0-2', fromDay: 0, toDay: 3, intervalSeconds: 600 },
      { name: 'days 3-6', fromDay: 3, toDay: 7, intervalSeconds: 1800 },
      { name: 'days 7+', fromDay: 7, toDay: Infinity, intervalSeconds: 7200 },
    ]);
    expect(bandsOf('*=15m')).toEqual([
      { name: 'days 0+', fromDay: 0, toDay: Infinity, intervalSeconds: 900 },
    ]);
  });

  it.each([
    ['', 'at least one band'],
    ['3d=10m', 'the last band must be "*"'],
    ['*=10m,7d=1h', '"*" (the rest of the horizon) must be the last band'],
    ['7d=10m,3d=1h,*=2h', 'grow from band to band'],
    ['3d=10x,*=2h', 'the interval must be 60s to 24h'],
    ['3d=30s,*=2h', 'the interval must be 60s to 24h'],
    ['3d:10m,*=2h', 'is not <bookable days>=<interval>'],
  ])('refuses %j with a message that says what is wrong', (text, message) => {
    const parsed = parseCadenceBands(text);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error).toContain(message);
  });

  it('stops start-up with the variable named, and retires SYNC_INTERVAL_SECONDS with the equivalent', () => {
    const base = {
      DATABASE_URL: 'postgres://localhost/x',
      CALENDBOOK_BASE_URL: 'http://127.0.0.1:4010/api/v1',
      CALENDBOOK_AUTH_URL: 'http://127.0.0.1:4010/auth',
      CALENDBOOK_CLIENT_ID: 'id',
      CALENDBOOK_CLIENT_SECRET: 'secret',
    };
    expect(() => loadConfig({ ...base, SYNC_BANDS: '3d=10m' }, ['sync'])).toThrow(
      /SYNC_BANDS .*the last band must be "\*"/,
    );
    expect(() => loadConfig({ ...base, SYNC_INTERVAL_SECONDS: '900' }, ['sync'])).toThrow(
      'SYNC_BANDS=*=900s',
    );
    expect(() => loadConfig({ ...base, SYNC_ADAPT_FACTORS: '2,1' }, ['sync'])).toThrow(/SYNC_ADAPT_FACTORS/);
    expect(() => loadConfig({ ...base, SYNC_ACCOUNT_INTERVAL: '30s' }, ['sync'])).toThrow(
      /SYNC_ACCOUNT_INTERVAL .*must be 60s to 24h, written like 90s, 10m or 2h/,
    );
    expect(() => loadConfig({ ...base, SYNC_CALL_BUDGET_PER_SECOND: 'lots' }, ['sync'])).toThrow(
      /SYNC_CALL_BUDGET_PER_SECOND must be a number of calls per second/,
    );
    const config = loadConfig({ ...base, UPSTREAM_RATE_LIMIT_PER_SECOND: '40' }, ['sync']);
    expect(config.sync.callBudgetPerSecond).toBe(40);
    expect(loadConfig({ ...base, SYNC_CALL_BUDGET_PER_SECOND: '0' }, ['sync']).sync.callBudgetPerSecond).toBe(
      0,
    );
    expect(config.sync.intervalSeconds).toBe(240);
    expect(config.sync.accountIntervalSeconds).toBe(900);
  });

  it('leaves out, once for every user of them, bands that start beyond SYNC_HORIZON_DAYS', () => {
    const env = {
      DATABASE_URL: 'postgres://localhost/x',
      CALENDBOOK_BASE_URL: 'http://127.0.0.1:4010/api/v1',
      CALENDBOOK_AUTH_URL: 'http://127.0.0.1:4010/auth',
      CALENDBOOK_CLIENT_ID: 'id',
      CALENDBOOK_CLIENT_SECRET: 'secret',
    };
    // The default SYNC_BANDS, 2d=4m,4d=10m,7d=30m,*=2h.
    const week = loadConfig({ ...env, SYNC_HORIZON_DAYS: '7' }, ['sync']).sync;
    expect(week.bands.map((band) => band.name)).toEqual(['days 0-1', 'days 2-3', 'days 4-6']);
    expect(week.bandsBeyondHorizon).toEqual(['days 7+']);
    const short = loadConfig({ ...env, SYNC_HORIZON_DAYS: '3' }, ['sync']).sync;
    expect(short.bands.map((band) => band.name)).toEqual(['days 0-1', 'days 2-3']);
    expect(short.bandsBeyondHorizon).toEqual(['days 4-6', 'days 7+']);
    const month = loadConfig(env, ['sync']).sync;
    expect(month.bands.map((band) => band.name)).toEqual(['days 0-1', 'days 2-3', 'days 4-6', 'days 7+']);
    expect(month.bandsBeyondHorizon).toEqual([]);
  });

  it('cuts a horizon into dates of the account’s zone, every date in exactly one band', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('2026-01-01'), max: new Date('2027-12-31'), noInvalidDate: true }),
        fc.constantFrom('Europe/Berlin', 'America/Los_Angeles', 'Pacific/Auckland', 'Asia/Kolkata'),
        fc.integer({ min: 1, max: 60 }),
        (now, zone, days) => {
          const horizon = horizonFrom(now, zone, days);
          const cut = BANDS.flatMap((band) => datesOfBand(horizon, band));
          expect(cut).toEqual(horizon.dates);
        },
      ),
    );
  });
});

describe('bands counted in bookable days', () => {
  const DEFAULT = bandsOf('2d=4m,4d=10m,7d=30m,*=2h');
  // Saturday 2026-03-07 in Berlin; open Monday to Friday, the next three weeks.
  const horizon = horizonFrom(new Date('2026-03-07T11:00:00Z'), 'Europe/Berlin', 14);
  const weekdays = new Set(horizon.dates.filter((date) => ![0, 6].includes(new Date(date).getUTCDay())));

  it('puts the first two open dates in the near band, and closed ones in the band of their calendar distance', () => {
    const byBand = datesByBand(horizon, DEFAULT, weekdays);
    expect(Object.fromEntries(byBand)).toEqual({
      // Saturday and Sunday (closed, days 0 and 1) stay near, as before; Monday and Tuesday join them.
      'days 0-1': ['2026-03-07', '2026-03-08', '2026-03-09', '2026-03-10'],
      'days 2-3': ['2026-03-11', '2026-03-12'],
      // The next weekend, closed, 7 and 8 calendar days away: the far band, as before.
      'days 4-6': ['2026-03-13', '2026-03-16', '2026-03-17'],
      'days 7+': ['2026-03-14', '2026-03-15', '2026-03-18', '2026-03-19', '2026-03-20'],
    });
  });

  it('counts calendar days when no date is known open', () => {
    expect(datesByBand(horizon, DEFAULT, new Set()).get('days 0-1')).toEqual(['2026-03-07', '2026-03-08']);
    expect(datesByBand(horizon, DEFAULT).get('days 2-3')).toEqual(['2026-03-09', '2026-03-10']);
  });
});

describe('when a connection’s bands are due', () => {
  it('makes never-pulled bands due at once, and each pulled band due after its own interval', () => {
    expect(dueBands(BANDS, {}, NOW).map((b) => b.name)).toEqual(['days 0-2', 'days 3-6', 'days 7+']);
    const first = scheduleAfterPull(
      BANDS,
      {},
      BANDS.map((b) => ({ name: b.name, changes: null, calls: 5 })),
      NOW,
      ADAPT,
      0,
      () => 0.5,
    );
    expect(first.nextSyncAt).toEqual(at(10));
    expect(dueBands(BANDS, first.state, at(9)).map((b) => b.name)).toEqual([]);
    expect(dueBands(BANDS, first.state, at(10)).map((b) => b.name)).toEqual(['days 0-2']);
    expect(dueBands(BANDS, first.state, at(30)).map((b) => b.name)).toEqual(['days 0-2', 'days 3-6']);
    expect(dueBands(BANDS, first.state, at(120)).map((b) => b.name)).toEqual([
      'days 0-2',
      'days 3-6',
      'days 7+',
    ]);
  });

  it('pulls a band that keeps changing faster and a quiet one slower, never beyond the bounds', () => {
    let state: BandState = {};
    const pull = (changes: number, minutes: number) => {
      const next = scheduleAfterPull(
        BANDS,
        state,
        [{ name: 'days 0-2', changes, calls: 4 }],
        at(minutes),
        ADAPT,
        0,
        () => 0.5,
      );
      state = next.state;
      return (Date.parse(state['days 0-2']!.dueAt) - at(minutes).getTime()) / 60_000;
    };
    expect(pull(3, 0)).toBe(5); // 10 min × 0.5
    expect(pull(1, 5)).toBe(5); // at the fastest bound
    const quiet = Array.from({ length: 12 }, (_, i) => pull(0, 10 + i * 20));
    expect(quiet[0]).toBeCloseTo(6.25); // × 1.25 after a quiet pull
    expect(quiet.at(-1)).toBe(20); // at the slowest bound
    expect(Math.max(...quiet)).toBe(20);
  });

  it('keeps bands it did not pull as they were, and drops bands no longer configured', () => {
    const before: BandState = {
      'days 0-2': { dueAt: at(10).toISOString(), factor: 1, calls: 4 },
      'days 3-6': { dueAt: at(25).toISOString(), factor: 0.7, calls: 6 },
      'days 0+': { dueAt: at(1).toISOString(), factor: 1, calls: 30 },
    };
    const next = scheduleAfterPull(
      BANDS,
      before,
      [{ name: 'days 7+', changes: 0, calls: 20 }],
      NOW,
      ADAPT,
      0,
      () => 0.5,
    );
    expect(next.state['days 0-2']).toEqual(before['days 0-2']);
    expect(next.state['days 3-6']).toEqual(before['days 3-6']);
    expect(next.state['days 0+']).toBeUndefined();
    expect(next.nextSyncAt).toEqual(at(10));
    expect(earliestDue(BANDS, {}, NOW)).toEqual(NOW);
  });
});

describe('a budget, not a schedule', () => {
  /** A connection pulled before: every band due `overdueMinutes` ago, with the given costs. */
  const connection = (
    id: string,
    overdueMinutes: number,
    calls = { near: 4, week: 5, far: 22 },
  ): DueConnection => ({
    id,
    bandState: {
      'days 0-2': { dueAt: at(-overdueMinutes).toISOString(), factor: 1, calls: calls.near },
      'days 3-6': { dueAt: at(-overdueMinutes).toISOString(), factor: 1, calls: calls.week },
      'days 7+': { dueAt: at(-overdueMinutes).toISOString(), factor: 1, calls: calls.far },
    },
    dueSince: at(-overdueMinutes),
  });

  it('pulls everything due when the budget covers it, one job per connection', () => {
    const due = [connection('a', 1), connection('b', 2)];
    const allocation = allocateCalls(BANDS, 28, due, 1000, 1000, NOW);
    expect(allocation.picks).toEqual([
      { connectionId: 'b', bands: ['days 0-2', 'days 3-6', 'days 7+'], calls: ACCOUNT_CALLS + 31 },
      { connectionId: 'a', bands: ['days 0-2', 'days 3-6', 'days 7+'], calls: ACCOUNT_CALLS + 31 },
    ]);
    expect(Object.values(allocation.deferred).every((d) => d.count === 0)).toBe(true);
  });

  it('when short, spends on near bands first and lets far bands wait, saying how long they have waited', () => {
    const due = Array.from({ length: 10 }, (_, i) => connection(`c${i}`, 30 + i));
    // Enough for every near band (10 × 6) and a few week bands (5 each), no far band.
    const allocation = allocateCalls(BANDS, 28, due, 75, 1000, NOW);
    const pulled = allocation.picks.flatMap((p) => p.bands);
    expect(pulled.filter((b) => b === 'days 0-2')).toHaveLength(10);
    expect(pulled.filter((b) => b === 'days 3-6')).toHaveLength(3);
    expect(pulled.filter((b) => b === 'days 7+')).toHaveLength(0);
    // The longest overdue go first within a band.
    expect(allocation.picks.filter((p) => p.bands.includes('days 3-6')).map((p) => p.connectionId)).toEqual([
      'c9',
      'c8',
      'c7',
    ]);
    expect(allocation.deferred['days 3-6']).toEqual({ count: 7, oldestOverdueSeconds: 36 * 60 });
    expect(allocation.deferred['days 7+']).toEqual({ count: 10, oldestOverdueSeconds: 39 * 60 });
    expect(allocation.deferred['days 0-2']).toEqual({ count: 0, oldestOverdueSeconds: 0 });
  });

  it('never plans more calls than it has, whatever is due', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            overdue: fc.integer({ min: 0, max: 600 }),
            near: fc.integer({ min: 0, max: 40 }),
            week: fc.integer({ min: 0, max: 40 }),
            far: fc.integer({ min: 0, max: 200 }),
          }),
          { maxLength: 60 },
        ),
        fc.integer({ min: 0, max: 500 }),
        (connections, available) => {
          const due = connections.map((c, i) => connection(`c${i}`, c.overdue, c));
          const allocation = allocateCalls(BANDS, 28, due, available, 1000, NOW);
          const planned = allocation.picks.reduce((sum, pick) => sum + pick.calls, 0);
          expect(planned).toBeLessThanOrEqual(available);
          // Strict priority: nothing goes while a band later (in units of its own interval) waits.
          const lateness = (index: number, band: string) =>
            connections[index]!.overdue / (band === 'days 0-2' ? 10 : band === 'days 3-6' ? 30 : 120);
          const picked = allocation.picks.flatMap((p) =>
            p.bands.map((band) => lateness(Number(p.connectionId.slice(1)), band)),
          );
          const pickedBands = new Set(
            allocation.picks.flatMap((p) => p.bands.map((band) => `${p.connectionId} ${band}`)),
          );
          const waiting = connections.flatMap((_, i) =>
            ['days 0-2', 'days 3-6', 'days 7+']
              .filter((band) => !pickedBands.has(`c${i} ${band}`))
              .map((band) => lateness(i, band)),
          );
          if (picked.length > 0 && waiting.length > 0) {
            expect(Math.min(...picked)).toBeGreaterThanOrEqual(Math.max(...waiting));
          }
        },
      ),
    );
  });

  it('pulls every band of a connection whose next sync was moved by hand before any band was due', () => {
    const notYet: DueConnection = {
      id: 'reconnected',
      bandState: {
        'days 0-2': { dueAt: at(5).toISOString(), factor: 1, calls: 4 },
        'days 3-6': { dueAt: at(25).toISOString(), factor: 1, calls: 5 },
        'days 7+': { dueAt: at(100).toISOString(), factor: 1, calls: 22 },
      },
      dueSince: at(-1),
    };
    expect(allocateCalls(BANDS, 28, [notYet], 1000, 1000, NOW).picks).toEqual([
      { connectionId: 'reconnected', bands: ['days 0-2', 'days 3-6', 'days 7+'], calls: ACCOUNT_CALLS + 31 },
    ]);
  });

  it('gets new connections their first sync before anything else, longest waiting first', () => {
    // Ten connections synced before, overdue 1 to 10 hours; two connected since, never synced: they have
    // nothing to show, so they go first, however short the budget, in the order they became due.
    const old = Array.from({ length: 10 }, (_, i) => connection(`old${i}`, (i + 1) * 60));
    const newer: DueConnection = { id: 'newer', bandState: {}, dueSince: at(-1) };
    const older: DueConnection = { id: 'older', bandState: {}, dueSince: at(-30) };
    const allocation = allocateCalls(BANDS, 28, [...old, newer, older], 35, 1000, NOW);
    expect(allocation.picks.map((p) => p.connectionId)).toEqual(['older']);
    expect(allocation.picks[0]!.bands).toEqual(['days 0-2', 'days 3-6', 'days 7+']);
  });

  it('lets no band wait forever: a far band late by more of its interval goes before a near one', () => {
    // Far band 5 hours overdue (2.5 of its 2-hour intervals) against a near band 10 minutes overdue (1 interval).
    const farLate: DueConnection = {
      id: 'far-late',
      bandState: {
        'days 0-2': { dueAt: at(5).toISOString(), factor: 1, calls: 4 },
        'days 3-6': { dueAt: at(5).toISOString(), factor: 1, calls: 5 },
        'days 7+': { dueAt: at(-300).toISOString(), factor: 1, calls: 22 },
      },
      dueSince: at(-300),
    };
    const nearLate: DueConnection = {
      id: 'near-late',
      bandState: {
        'days 0-2': { dueAt: at(-10).toISOString(), factor: 1, calls: 4 },
        'days 3-6': { dueAt: at(5).toISOString(), factor: 1, calls: 5 },
        'days 7+': { dueAt: at(5).toISOString(), factor: 1, calls: 22 },
      },
      dueSince: at(-10),
    };
    const allocation = allocateCalls(BANDS, 28, [nearLate, farLate], 24, 1000, NOW);
    expect(allocation.picks).toEqual([{ connectionId: 'far-late', bands: ['days 7+'], calls: 24 }]);
    expect(allocation.deferred['days 0-2']).toEqual({ count: 1, oldestOverdueSeconds: 600 });
  });

  it('lets one pull dearer than the whole bank go when the bank is full, so nothing starves', () => {
    const allocation = allocateCalls(
      BANDS,
      28,
      [connection('big', 5, { near: 4, week: 5, far: 500 })],
      300,
      300,
      NOW,
    );
    expect(allocation.picks).toEqual([
      { connectionId: 'big', bands: ['days 0-2', 'days 3-6', 'days 7+'], calls: 511 },
    ]);
  });
});
