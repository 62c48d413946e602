// The pieces of the demo's history that need no I/O: the one clock the simulator and slotfeed share, the plan,
// the booking pattern, and the lines the demo prints about it. The history itself, through the real syncs, is
// checked end to end by demo-command.test.ts.
import { describe, expect, it } from '@jest/globals';
import {
  arrivalTimes,
  meanBookingsPer,
  pickNearTermOffer,
  poisson,
  weeklyMinutes,
  type Offer,
} from '../../src/demo/booking-pattern.js';
import { createDemoClock } from '../../src/demo/demo-clock.js';
import { loadConfig } from '../../src/config.js';
import {
  bandsOfRound,
  DEMO_HISTORY,
  describeHistory,
  describeHistoryPlan,
  historyResumesAt,
  planHistory,
  resumeHistoryPlan,
} from '../../src/demo/demo-history.js';
import { createPrng } from '../../src/simulator/index.js';

const DAY_MS = 86_400_000;
const NOW = Date.parse('2026-03-02T09:00:00Z');

describe('the demo clock', () => {
  it('is real time until it travels, flows on from where it travelled to, and comes back for good', () => {
    let real = NOW;
    const clock = createDemoClock(() => real);
    expect(clock.now().toISOString()).toBe('2026-03-02T09:00:00.000Z');

    clock.travelTo(new Date('2026-02-09T09:00:00Z'));
    real += 1500;
    expect(clock.now().toISOString()).toBe('2026-02-09T09:00:01.500Z');
    clock.travelTo(new Date('2026-02-10T21:00:00Z'));
    real += 10;
    expect(clock.now().toISOString()).toBe('2026-02-10T21:00:00.010Z');

    clock.backToPresent();
    expect(clock.now().getTime()).toBe(real);
  });
});

describe('planHistory', () => {
  it('starts the given days back and steps a sync interval at a time, the present’s sync being the last', () => {
    const plan = planHistory(new Date(NOW), 21, 2);
    expect(plan.startsAt.toISOString()).toBe('2026-02-09T09:00:00.000Z');
    expect(plan.stepMs).toBe(12 * 3600_000);
    // 42 syncs in 21 days: the connect's, 41 more, and the one the live daemon runs at the present.
    expect(plan.rounds).toBe(41);
    expect(plan.startsAt.getTime() + plan.rounds * plan.stepMs).toBe(NOW - plan.stepMs);
  });

  it('resumes a history stopped half way from its last round, up to the present of the run that resumes it', () => {
    const first = planHistory(new Date(NOW), 21, 2);
    const record = { ...first, startsAt: first.startsAt.toISOString(), roundsDone: 11 };
    const sameDay = resumeHistoryPlan(record, new Date(NOW + 3600_000));
    expect(sameDay).toMatchObject({
      startsAt: first.startsAt,
      stepMs: first.stepMs,
      rounds: 41,
      roundsDone: 11,
    });
    expect(sameDay.resumed).toBe(true);
    // Round 10 (the eleventh, counting the connect's) was the last one recorded.
    expect(historyResumesAt(sameDay).getTime()).toBe(first.startsAt.getTime() + 10 * first.stepMs);
    expect(historyResumesAt(first)).toEqual(first.startsAt);
    // Two days later: four rounds more to reach the present.
    expect(resumeHistoryPlan(record, new Date(NOW + 2 * DAY_MS)).rounds).toBe(45);
  });

  it('covers several weeks by default', () => {
    expect(DEMO_HISTORY.days).toBeGreaterThanOrEqual(21);
  });

  it('pulls the week ahead every round and every band on the first round of each week', () => {
    const { bands } = loadConfig({ SYNC_BANDS: '4d=10m,7d=40m,*=3h', SYNC_HORIZON_DAYS: '28' }, [
      'sync',
    ]).sync;
    const rounds = Array.from({ length: 41 }, (_, i) => bandsOfRound(bands, i + 1, 2));
    // Two rounds a day: rounds 14 and 28 begin the second and third weeks (round 0 is the connect's whole sync).
    expect(rounds.flatMap((bandsPulled, i) => (bandsPulled === undefined ? [i + 1] : []))).toEqual([14, 28]);
    expect(rounds[0]).toEqual(['days 0-3', 'days 4-6']);
    expect(rounds[1]).toEqual(['days 0-3', 'days 4-6']);
    // Bands that all lie in the week ahead, or none that does: every round is whole.
    const near = loadConfig({ SYNC_BANDS: '3d=10m,*=30m', SYNC_HORIZON_DAYS: '7' }, ['sync']).sync.bands;
    expect(bandsOfRound(near, 1, 2)).toBeUndefined();
    const far = loadConfig({ SYNC_BANDS: '*=1h', SYNC_HORIZON_DAYS: '28' }, ['sync']).sync.bands;
    expect(bandsOfRound(far, 1, 2)).toBeUndefined();
  });
});

describe('the booking pattern', () => {
  it('poisson: the mean it is asked for, never negative, nothing for a mean of 0', () => {
    const prng = createPrng(7);
    const draws = Array.from({ length: 20_000 }, () => poisson(prng, 1.3));
    expect(Math.min(...draws)).toBe(0);
    expect(draws.reduce((a, b) => a + b, 0) / draws.length).toBeCloseTo(1.3, 1);
    expect(poisson(prng, 0)).toBe(0);
  });

  it('counts a week of working hours, 24:00 ends included', () => {
    expect(
      weeklyMinutes({
        mon: [
          { start: '09:00', end: '12:00' },
          { start: '13:00', end: '17:00' },
        ],
        tue: [{ start: '15:00', end: '24:00' }],
        wed: [],
        thu: [],
        fri: [],
        sat: [],
        sun: [],
      }),
    ).toBe(7 * 60 + 9 * 60);
  });

  it('books enough to fill the share of the offered time in the long run', () => {
    // 35 working hours a week = 300 minutes a day; a third of it in 50-minute bookings is 2 a day, 1 per 12 h.
    const mean = meanBookingsPer({
      weeklyMinutes: 35 * 60,
      meanDurationMinutes: 50,
      share: 1 / 3,
      periodMs: DAY_MS / 2,
    });
    expect(mean).toBeCloseTo(1, 10);
    expect(
      meanBookingsPer({ weeklyMinutes: 600, meanDurationMinutes: 0, share: 0.3, periodMs: DAY_MS }),
    ).toBe(0);
  });

  it('prefers near-term slots: a slot two days further ahead is picked half as often', () => {
    const prng = createPrng(3);
    const offers: Offer[] = [
      { eventId: 'a', startMs: NOW + DAY_MS },
      { eventId: 'b', startMs: NOW + 3 * DAY_MS },
      { eventId: 'c', startMs: NOW + 9 * DAY_MS },
    ];
    const picked = { a: 0, b: 0, c: 0 };
    for (let i = 0; i < 20_000; i++) picked[pickNearTermOffer(prng, offers, NOW)!.eventId as 'a']++;
    expect(picked.a / picked.b).toBeCloseTo(2, 0);
    expect(picked.c).toBeLessThan(picked.b / 4);
    expect(pickNearTermOffer(prng, [], NOW)).toBeUndefined();
  });

  it('spreads the arrivals of one period inside it, in order', () => {
    const times = arrivalTimes(createPrng(5), 50, NOW, NOW + DAY_MS / 2);
    expect(times).toHaveLength(50);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(times.every((t) => t > NOW && t < NOW + DAY_MS / 2)).toBe(true);
  });

  it('is the same from the same seed', () => {
    const run = () => {
      const prng = createPrng(11);
      return [poisson(prng, 2), ...arrivalTimes(prng, 3, NOW, NOW + DAY_MS)];
    };
    expect(run()).toEqual(run());
  });
});

describe('what the demo says about its history', () => {
  const plan = planHistory(new Date(NOW), 21, 2);

  it('before: from when, and how often; or that an existing history is kept', () => {
    expect(describeHistoryPlan(plan, 21)).toBe(
      'History: a fresh database, so the accounts connect 21 days back, at 2026-02-09 09:00 UTC ' +
        '(one clock for the simulator and slotfeed), and sync twice a day up to now',
    );
    expect(describeHistoryPlan(undefined, 21)).toMatch(/already holds connections; its history is kept/);
    const resumed = resumeHistoryPlan(
      { ...plan, startsAt: plan.startsAt.toISOString(), roundsDone: 11 },
      new Date(NOW),
    );
    expect(describeHistoryPlan(resumed, 21)).toBe(
      'History: the last run stopped after 11 sync rounds of 42; recording the rest, from 2026-02-14 09:00 UTC up to now',
    );
  });

  it('after a stop half way: that the next run records the rest; after a resumed one: how much this run did', () => {
    const summary = { rounds: 11, booked: 30, cancelled: 3, inferred: 25 };
    expect(describeHistory(plan, summary, 4_000)).toBe(
      'History recorded in 4.0 s: 11 sync rounds of 42, 30 simulated bookings (3 cancelled), 25 inferred by the ' +
        'syncs; the clock is back at the present.\nThe history is unfinished: the next run of the demo records the ' +
        'rest (delete its data directory to start afresh).',
    );
    const resumed = resumeHistoryPlan(
      { ...plan, startsAt: plan.startsAt.toISOString(), roundsDone: 11 },
      new Date(NOW),
    );
    expect(describeHistory(resumed, { ...summary, rounds: 42 }, 6_000)).toMatch(
      /^History recorded in 6\.0 s: 42 sync rounds of 42 \(31 in this run\), [^\n]*present\.$/,
    );
  });

  it('after: how long it took and what it holds, and why it ended early if it did', () => {
    const summary = { rounds: 42, booked: 110, cancelled: 12, inferred: 97 };
    expect(describeHistory(plan, summary, 9_870)).toBe(
      'History recorded in 9.9 s: 42 sync rounds of 42, 110 simulated bookings (12 cancelled), 97 inferred ' +
        'by the syncs; the clock is back at the present.',
    );
    expect(describeHistory(plan, { ...summary, rounds: 7, stoppedEarly: 'boom' }, 1_000)).toMatch(
      /7 sync rounds of 42.*\nThe history ended early: boom\nThe history is unfinished: /,
    );
  });
});
