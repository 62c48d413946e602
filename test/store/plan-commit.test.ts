// The sync commit's decisions, without a database: planCommit takes the connection's state as the commit read it
// and what a (partial) pull saw, and says what to write. The properties are what a feed's subscriber, a webhook
// receiver and an operator reading the staleness metric rely on: a pull closes only what it could see gone, and
// says why; endpoints hear exactly the changes of availability; every change is counted once, in its band.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { closeReasonOf } from '../../src/store/close-reasons.js';
import type { CommitPrevious, SnapshotInput } from '../../src/store/commit-plan.js';
import { commitEvents, planCommit } from '../../src/store/plan-commit.js';
import {
  coverageAfterPull,
  EVERY_SLOT_START,
  NEVER_PULLED,
  readPullCoverage,
  slotStartPulledAt,
} from '../../src/store/pull-coverage.js';
import type { FetchedSlot, StoredOpenSlot } from '../../src/store/slot-diff.js';

const ZONE = 'Europe/Berlin';
const NOW = new Date('2026-03-02T08:00:00Z'); // 09:00 in Berlin
const PULL_STARTED = new Date('2026-03-02T07:59:00Z');
const DATES = Array.from({ length: 7 }, (_, i) =>
  DateTime.fromISO('2026-03-02').plus({ days: i }).toISODate()!,
);
const CONTEXT = { connectionId: 'c-1', now: NOW, pullStartedAt: PULL_STARTED };
const HOUR = 3_600_000;

const dateOf = (d: Date) => DateTime.fromJSDate(d, { zone: ZONE }).toISODate()!;
const key = (s: { eventId: string; startsAt: Date }) => `${s.eventId} ${s.startsAt.toISOString()}`;
const eventType = (upstreamEventId: string, enabled: boolean, payload: unknown = { upstreamEventId }) => ({
  upstreamEventId,
  title: upstreamEventId,
  durationMinutes: 30,
  enabled,
  secret: false,
  url: null,
  color: null,
  payload,
});
const nothingStored = (over: Partial<CommitPrevious> = {}): CommitPrevious => ({
  profile: null,
  eventTypes: [],
  overviews: [],
  openSlots: [],
  pullCoverage: NEVER_PULLED,
  ...over,
});

/** The horizon cut into consecutive bands, some of them pulled. */
const horizonArb = fc
  .tuple(fc.subarray([1, 2, 3, 4, 5, 6]), fc.array(fc.boolean(), { minLength: 7, maxLength: 7 }))
  .map(([cuts, pulledFlags]) => {
    const bounds = [0, ...cuts, DATES.length];
    const bands = bounds
      .slice(1)
      .map((to, i) => ({ name: `band${i}`, dates: DATES.slice(bounds[i], to), calls: 1 }));
    return { bands, pulled: bands.filter((_, i) => pulledFlags[i]) };
  });

const EVENT_IDS = ['a', 'b', 'c'] as const;
const stateArb = fc.constantFrom('enabled', 'disabled', 'removed');

/** Stored open slots from a day ago to past the horizon, and what became of each upstream. */
const storedArb = fc.uniqueArray(
  fc.record({
    eventId: fc.constantFrom(...EVENT_IDS),
    hours: fc.integer({ min: -24, max: 8 * 24 }),
    minutes: fc.constantFrom(30, 60),
    sequence: fc.integer({ min: 0, max: 2 }),
    fate: fc.constantFrom('still open', 'gone', 'end moved'),
  }),
  { selector: (s) => `${s.eventId} ${s.hours}`, maxLength: 40 },
);
const newArb = fc.array(
  fc.record({ eventId: fc.constantFrom(...EVENT_IDS), hours: fc.integer({ min: 1, max: 7 * 24 }) }),
  {
    maxLength: 10,
  },
);

const scenarioArb = fc
  .record({
    horizon: horizonArb,
    states: fc.tuple(stateArb, stateArb, stateArb),
    stored: storedArb,
    fresh: newArb,
    coverage: fc.constantFrom('never pulled', 'pulled an hour ago'),
  })
  .map(({ horizon, states, stored, fresh, coverage }) => {
    const state = new Map(EVENT_IDS.map((id, i) => [id, states[i]!]));
    const pulledDates = new Set(horizon.pulled.flatMap((band) => band.dates));
    // What a real pull returns: open slots of enabled event types on the dates it pulled, not yet started.
    const visible = (eventId: string, startsAt: Date) =>
      state.get(eventId as 'a') === 'enabled' && pulledDates.has(dateOf(startsAt)) && startsAt > NOW;
    const openSlots: StoredOpenSlot[] = stored.map((s, i) => {
      const startsAt = new Date(NOW.getTime() + s.hours * HOUR);
      return {
        id: BigInt(i + 1),
        eventId: s.eventId,
        startsAt,
        endsAt: new Date(startsAt.getTime() + s.minutes * 60_000),
        sequence: s.sequence,
      };
    });
    const fetched: FetchedSlot[] = [
      ...stored.flatMap((s, i) => {
        const slot = openSlots[i]!;
        if (!visible(slot.eventId, slot.startsAt) || s.fate === 'gone') return [];
        const endsAt = s.fate === 'end moved' ? new Date(slot.endsAt.getTime() + 15 * 60_000) : slot.endsAt;
        return [{ eventId: slot.eventId, startsAt: slot.startsAt, endsAt }];
      }),
      ...fresh
        .map((f) => ({
          eventId: f.eventId,
          startsAt: new Date(NOW.getTime() + f.hours * HOUR + 10 * 60_000),
        }))
        .filter((f) => visible(f.eventId, f.startsAt))
        .map((f) => ({ ...f, endsAt: new Date(f.startsAt.getTime() + 30 * 60_000) })),
    ];
    const previous = nothingStored({
      openSlots,
      pullCoverage:
        coverage === 'never pulled'
          ? NEVER_PULLED
          : coverageAfterPull(NEVER_PULLED, [EVERY_SLOT_START], new Date(NOW.getTime() - HOUR), NOW),
    });
    const pulled: SnapshotInput = {
      profile: { payload: { name: 'Ada' }, email: 'ada@example.com', name: 'Ada', timezone: ZONE },
      eventTypes: EVENT_IDS.filter((id) => state.get(id) !== 'removed').map((id) =>
        eventType(id, state.get(id) === 'enabled'),
      ),
      overviews: [],
      slots: fetched,
      horizon: {
        zone: ZONE,
        dates: DATES,
        bandNames: horizon.bands.map((b) => b.name),
        bands: horizon.pulled,
      },
    };
    return { previous, pulled, state, pulledDates, bandNames: horizon.pulled.map((b) => b.name) };
  });

describe('planCommit over random partial pulls', () => {
  it('closes a vanished slot only where the pull could see it gone, with the reason closeReasonOf gives', () => {
    fc.assert(
      fc.property(scenarioArb, ({ previous, pulled, state, pulledDates }) => {
        const plan = planCommit(previous, pulled, CONTEXT);
        const fetched = new Set(pulled.slots.map(key));
        const closed = new Map(plan.slots.close.map((c) => [c.id, c.reason]));
        for (const slot of previous.openSlots) {
          const date = dateOf(slot.startsAt);
          const lookedAt =
            slot.startsAt <= NOW ||
            state.get(slot.eventId as 'a') !== 'enabled' ||
            !DATES.includes(date) ||
            pulledDates.has(date);
          if (fetched.has(key(slot)) || !lookedAt) {
            expect(closed.has(slot.id)).toBe(false);
            continue;
          }
          const reason = closed.get(slot.id);
          expect(reason).toBe(
            closeReasonOf(slot, {
              now: NOW,
              eventTypes: new Map((pulled.eventTypes ?? []).map((e) => [e.upstreamEventId, e])),
              horizon: { zone: ZONE, dates: new Set(DATES), pulled: pulledDates },
            }),
          );
          if (slot.startsAt <= NOW) expect(reason).toBe('passed');
          else if (state.get(slot.eventId as 'a') === 'removed') expect(reason).toBe('event_type_removed');
          else if (state.get(slot.eventId as 'a') === 'disabled') expect(reason).toBe('event_type_disabled');
          else if (!DATES.includes(date)) expect(reason).toBe('window_moved');
          else expect(reason).toBe('taken');
        }
      }),
    );
  });

  it('counts every change once: by reason, by date band, by pulled band, and in the webhook event', () => {
    fc.assert(
      fc.property(scenarioArb, ({ previous, pulled, pulledDates, bandNames }) => {
        const plan = planCommit(previous, pulled, CONTEXT);
        const { changes } = plan;
        expect(changes.slotsOpened).toBe(plan.slots.open.length);
        expect(changes.slotsClosed).toBe(plan.slots.close.length);
        expect(changes.slotsRescheduled).toBe(plan.slots.reschedule.length);
        expect(Object.values(changes.closedBy).reduce((a, b) => a + b, 0)).toBe(plan.slots.close.length);
        expect(plan.infersBookings).toBe((changes.closedBy.taken ?? 0) > 0);
        // Slots that passed or left the horizon changed nobody's availability.
        const announced = plan.slots.close.filter((c) => !['passed', 'window_moved'].includes(c.reason));
        const total = plan.slots.open.length + announced.length + plan.slots.reschedule.length;
        expect(Object.values(changes.changedByBand).reduce((a, b) => a + b, 0)).toBe(total);
        expect(plan.availabilityChanged === undefined).toBe(total === 0);
        expect(changes.feedVersionMoved).toBe(
          changes.profileChanged ||
            changes.eventTypesChanged > 0 ||
            changes.slotsOpened + changes.slotsClosed + changes.slotsRescheduled > 0,
        );
        expect(Object.keys(changes.changedByPulledBand).sort()).toEqual([...bandNames].sort());
        const byId = new Map(previous.openSlots.map((s) => [s.id, s]));
        const changedStarts = [
          ...plan.slots.open.map((s) => s.startsAt),
          ...announced.map((c) => byId.get(c.id)!.startsAt),
          ...plan.slots.reschedule.map((m) => byId.get(m.id)!.startsAt),
        ];
        expect(Object.values(changes.changedByPulledBand).reduce((a, b) => a + b, 0)).toBe(
          changedStarts.filter((s) => pulledDates.has(dateOf(s))).length,
        );
      }),
    );
  });

  it('bounds each change by the last look at what showed it, and none when nothing was looked at before', () => {
    fc.assert(
      fc.property(scenarioArb, ({ previous, pulled }) => {
        const { changes } = planCommit(previous, pulled, CONTEXT);
        const total = Object.values(changes.changedByBand).reduce((a, b) => a + b, 0);
        if (previous.pullCoverage === NEVER_PULLED) {
          expect(changes.changeStaleness).toEqual([]);
          expect(changes.stalenessBoundSeconds).toBeNull();
        } else {
          for (const entry of changes.changeStaleness) expect(entry.boundSeconds).toBe(3600);
          expect(changes.changeStaleness.reduce((sum, e) => sum + e.changes, 0)).toBe(total);
          expect(changes.stalenessBoundSeconds).toBe(3600);
        }
      }),
    );
  });

  it('is a function of its inputs: the same plan twice, the inputs untouched', () => {
    fc.assert(
      fc.property(scenarioArb, ({ previous, pulled }) => {
        const before = structuredClone({ previous, pulled });
        const first = planCommit(previous, pulled, CONTEXT);
        expect(planCommit(previous, pulled, CONTEXT)).toEqual(first);
        expect({ previous, pulled }).toEqual(before);
      }),
    );
  });
});

describe('planCommit', () => {
  const pulledWhole = (over: Partial<SnapshotInput> = {}): SnapshotInput => ({
    profile: { payload: { name: 'Ada' }, email: 'ada@example.com', name: 'Ada', timezone: ZONE },
    eventTypes: [eventType('a', true)],
    overviews: [{ upstreamEventId: 'a', band: '', payload: { days: 7 } }],
    slots: [],
    ...over,
  });

  it('plans nothing for a re-sync that saw nothing new', () => {
    const first = planCommit(nothingStored(), pulledWhole(), CONTEXT);
    expect(first.changes).toMatchObject({ profileChanged: true, eventTypesChanged: 1, overviewsChanged: 1 });
    const previous = nothingStored({
      profile: { id: 1n, contentHash: first.profile.create[0]!.contentHash },
      eventTypes: [
        { id: 2n, upstreamEventId: 'a', contentHash: first.eventTypes.create[0]!.contentHash, enabled: true },
      ],
      overviews: [
        { id: 3n, upstreamEventId: 'a', band: '', contentHash: first.overviews.create[0]!.contentHash },
      ],
      pullCoverage: readPullCoverage(first.pullCoverage),
    });
    const again = planCommit(previous, pulledWhole(), CONTEXT);
    expect([again.profile, again.eventTypes, again.overviews]).toEqual(
      Array(3).fill({ close: [], create: [] }),
    );
    expect(again.changes).toMatchObject({
      feedVersionMoved: false,
      eventTypesChanged: 0,
      profileChanged: false,
    });
    expect(again.availabilityChanged).toBeUndefined();
  });

  it('versions an event type whose content changed and closes one that vanished', () => {
    const previous = nothingStored({
      eventTypes: [
        { id: 7n, upstreamEventId: 'a', contentHash: 'old', enabled: true },
        { id: 8n, upstreamEventId: 'gone', contentHash: 'x', enabled: true },
      ],
    });
    const plan = planCommit(previous, pulledWhole(), CONTEXT);
    expect(plan.eventTypes.close).toEqual([7n, 8n]);
    expect(plan.eventTypes.create.map((e) => e.upstreamEventId)).toEqual(['a']);
    expect(plan.changes.eventTypesChanged).toBe(2);
    expect(plan.changes.feedVersionMoved).toBe(true);
  });

  it('replaces the overviews of the bands pulled, of disabled event types and of bands no longer configured', () => {
    const overview = (id: bigint, upstreamEventId: string, band: string) => ({
      id,
      upstreamEventId,
      band,
      contentHash: 'h',
    });
    const previous = nothingStored({
      overviews: [
        overview(1n, 'a', 'near'),
        overview(2n, 'a', 'far'),
        overview(3n, 'off', 'far'),
        overview(4n, 'a', ''),
      ],
    });
    const plan = planCommit(
      previous,
      pulledWhole({
        eventTypes: [eventType('a', true), eventType('off', false)],
        overviews: [{ upstreamEventId: 'a', band: 'near', payload: { n: 1 } }],
        horizon: {
          zone: ZONE,
          dates: DATES,
          bandNames: ['near', 'far'],
          bands: [{ name: 'near', dates: DATES.slice(0, 3), calls: 2 }],
        },
      }),
      CONTEXT,
    );
    expect(plan.overviews.close).toEqual([1n, 3n, 4n]);
    expect(plan.overviews.create.map((o) => o.band)).toEqual(['near']);
  });

  it('tells endpoints of availability first, then of each booking inferred', () => {
    const slot = {
      id: 1n,
      eventId: 'a',
      startsAt: new Date('2026-03-03T09:00:00Z'),
      endsAt: new Date('2026-03-03T09:30:00Z'),
      sequence: 0,
    };
    const plan = planCommit(nothingStored({ openSlots: [slot] }), pulledWhole(), CONTEXT);
    expect(plan.slots.close).toEqual([{ id: 1n, reason: 'taken' }]);
    const events = commitEvents(
      plan,
      [{ startsAt: slot.startsAt, endsAt: slot.endsAt, eventIds: ['a'] }],
      CONTEXT,
    );
    expect(events.map((e) => e.type)).toEqual(['availability.changed', 'booking.inferred']);
    expect(commitEvents({ availabilityChanged: undefined }, [], CONTEXT)).toEqual([]);
  });

  it("dates the pulled dates' coverage by when the pull began, and leaves the rest as it was", () => {
    const plan = planCommit(
      nothingStored(),
      pulledWhole({
        horizon: {
          zone: ZONE,
          dates: DATES,
          bandNames: ['near', 'far'],
          bands: [{ name: 'near', dates: DATES.slice(0, 2), calls: 2 }],
        },
      }),
      CONTEXT,
    );
    const coverage = readPullCoverage(plan.pullCoverage);
    expect(slotStartPulledAt(coverage, new Date('2026-03-03T12:00:00Z'))).toEqual(PULL_STARTED);
    expect(slotStartPulledAt(coverage, new Date('2026-03-05T12:00:00Z'))).toBeNull();
    expect(coverage.eventTypesPulledAtMs).toBe(PULL_STARTED.getTime());
  });
});

describe('closeReasonOf with the dates a partial pull looked at', () => {
  it('keeps open a slot on a horizon date the pull did not look at, unless its reason holds on every date', () => {
    const context = {
      now: NOW,
      eventTypes: new Map([
        ['on', { enabled: true }],
        ['off', { enabled: false }],
      ]),
      horizon: { zone: ZONE, dates: new Set(DATES), pulled: new Set(DATES.slice(0, 2)) },
    };
    const reason = (eventId: string, start: string) =>
      closeReasonOf({ eventId, startsAt: new Date(start) }, context);
    expect(reason('on', '2026-03-03T10:00:00Z')).toBe('taken');
    expect(reason('on', '2026-03-05T10:00:00Z')).toBeNull();
    expect(reason('off', '2026-03-05T10:00:00Z')).toBe('event_type_disabled');
    expect(reason('gone', '2026-03-05T10:00:00Z')).toBe('event_type_removed');
    expect(reason('on', '2026-03-20T10:00:00Z')).toBe('window_moved');
    expect(reason('on', '2026-03-01T10:00:00Z')).toBe('passed');
  });
});
