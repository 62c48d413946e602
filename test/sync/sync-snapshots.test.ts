import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FaultOutcome } from '../../src/simulator/index.js';
import { syncConnection, SyncFailedError } from '../../src/sync/sync-connection.js';
import { calendarDateIn } from '../../src/upstream/iso-values.js';
import type { Overview } from '../../src/upstream/schemas.js';
import { createSyncHarness, FakeClock, type SyncHarness } from '../support/sync-harness.js';
import {
  apiCallsOf,
  expectedSync,
  simUser,
  snapshotRowCounts,
  storedOpenSlots,
} from '../support/sync-truth.js';

let h: SyncHarness;
let email: string;
let userId: string;
let connectionId: string;
const clock = new FakeClock(new Date('2026-03-02T09:00:00Z'));

// Each sync a second after the last, so runs are ordered in time as they are in life.
const syncOnce = () => {
  clock.advance(1);
  return syncConnection(h.services.syncDeps, { connectionId, jobId: null, attempt: 1, maxAttempts: 1 });
};
const feedVersion = async () =>
  (await h.clients.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } })).feedVersion;
/** Each enabled event type's current overview windows, as stored, in a fixed order. */
async function currentOverviews(): Promise<Overview[]> {
  const rows = await h.clients.prisma.overview.findMany({
    where: { connectionId, validTo: null },
    orderBy: { upstreamEventId: 'asc' },
  });
  return rows.flatMap((row) => (row.payload as unknown as StoredOverview).windows.map((w) => w.overview));
}
interface StoredOverview {
  timezone: string;
  windows: { startDate: string; period: string; overview: Overview }[];
}
const latestRun = () =>
  h.clients.prisma.syncRun.findFirstOrThrow({ where: { connectionId }, orderBy: { finishedAt: 'desc' } });

beforeAll(async () => {
  h = await createSyncHarness('snapshots', { clock });
  ({ email, id: userId } = h.sim.users[0]!);
  connectionId = await h.connect(email);
  h.sim.control.resetCallCounts();
});
afterAll(async () => {
  await h.close();
});

describe('a sync against the simulator', () => {
  it('stores exactly the simulator’s open slots on the first sync, with the fewest calls the API allows', async () => {
    const expected = expectedSync(h.sim, email, h.clock.now(), 28);
    expect(expected.slots.length).toBeGreaterThan(20);

    const changes = await syncOnce();

    expect(await storedOpenSlots(h.clients.prisma, connectionId)).toEqual(expected.slots);
    expect(changes.slotsOpened).toBe(expected.slots.length);
    expect(apiCallsOf(h.sim, userId)).toBe(expected.calls);
    const run = await latestRun();
    expect(run.outcome).toBe('succeeded');
    expect(run.upstreamCalls).toBe(expected.calls);
    expect(run.callsByEndpoint).toMatchObject({ 'GET /events': 1, 'GET /users/me': 1 });
    const connection = await h.clients.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } });
    expect(connection.timezone).toBe(simUser(h.sim, email).timezone);
    expect(connection.feedVersion).toBe(1);
  });

  it('writes no snapshot rows and keeps the feed version when nothing changed', async () => {
    const before = await snapshotRowCounts(h.clients.prisma);
    const version = await feedVersion();

    const changes = await syncOnce();

    expect(await snapshotRowCounts(h.clients.prisma)).toEqual(before);
    expect(await feedVersion()).toBe(version);
    expect(changes).toMatchObject({
      slotsOpened: 0,
      slotsClosed: 0,
      eventTypesChanged: 0,
      profileChanged: false,
    });
  });

  it('closes exactly the slots a booking took, and opens a new row when it is freed', async () => {
    const before = expectedSync(h.sim, email, h.clock.now(), 28);
    const [eventId, start] = before.slots[5]!.split(' ') as [string, string];
    h.sim.control.book(eventId, start);
    const after = expectedSync(h.sim, email, h.clock.now(), 28);
    const taken = before.slots.filter((s) => !after.slots.includes(s));
    expect(taken).toContain(before.slots[5]);

    await syncOnce();

    const closed = await h.clients.prisma.slot.findMany({ where: { connectionId, goneAt: { not: null } } });
    expect(
      closed.map((r) => `${r.upstreamEventId} ${r.startsAt.toISOString()} ${r.endsAt.toISOString()}`).sort(),
    ).toEqual(taken);
    expect(await storedOpenSlots(h.clients.prisma, connectionId)).toEqual(after.slots);

    h.sim.control.free(eventId, start);
    await syncOnce();

    expect(await storedOpenSlots(h.clients.prisma, connectionId)).toEqual(before.slots);
    const rowsOfThatSlot = await h.clients.prisma.slot.findMany({
      where: { connectionId, upstreamEventId: eventId, startsAt: new Date(start) },
      orderBy: { id: 'asc' },
    });
    expect(rowsOfThatSlot.map((r) => r.goneAt === null)).toEqual([false, true]);
  });

  it('closes the slots of an event type that was disabled', async () => {
    const eventType = simUser(h.sim, email).event_types.find((e) => e.enabled)!;
    h.sim.control.updateEventType(userId, eventType.event_id, { enabled: false });

    await syncOnce();

    const open = await h.clients.prisma.slot.count({
      where: { connectionId, upstreamEventId: eventType.event_id, goneAt: null },
    });
    expect(open).toBe(0);
    const current = await h.clients.prisma.eventType.findFirstOrThrow({
      where: { connectionId, upstreamEventId: eventType.event_id, validTo: null },
    });
    expect(current.enabled).toBe(false);
    expect(await storedOpenSlots(h.clients.prisma, connectionId)).toEqual(
      expectedSync(h.sim, email, h.clock.now(), 28).slots,
    );
    h.sim.control.updateEventType(userId, eventType.event_id, { enabled: true });
    await syncOnce();
  });

  it('keeps a slot whose end moved as the same row, one sequence higher', async () => {
    const eventType = simUser(h.sim, email).event_types.find((e) => e.enabled)!;
    const rowsBefore = await h.clients.prisma.slot.findMany({
      where: { connectionId, upstreamEventId: eventType.event_id, goneAt: null },
    });
    h.sim.control.updateEventType(userId, eventType.event_id, {
      duration_minutes: eventType.duration_minutes + 15,
    });
    try {
      await syncOnce();
      await expectRescheduled();
    } finally {
      h.sim.control.updateEventType(userId, eventType.event_id, {
        duration_minutes: eventType.duration_minutes,
      });
      await syncOnce();
    }

    async function expectRescheduled() {
      expect(await storedOpenSlots(h.clients.prisma, connectionId)).toEqual(
        expectedSync(h.sim, email, h.clock.now(), 28).slots,
      );
      const rowsAfter = await h.clients.prisma.slot.findMany({
        where: { connectionId, upstreamEventId: eventType.event_id, goneAt: null },
      });
      const kept = rowsAfter.filter((row) => rowsBefore.some((old) => old.id === row.id));
      expect(kept.length).toBeGreaterThan(0);
      for (const row of kept) {
        const old = rowsBefore.find((o) => o.id === row.id)!;
        expect(row.sequence).toBe(old.sequence + 1);
        expect(row.endsAt.getTime() - row.startsAt.getTime()).toBe(
          (eventType.duration_minutes + 15) * 60_000,
        );
        expect(row.lastChangedAt).toEqual(h.clock.now());
        expect(row.firstSeenAt).toEqual(old.firstSeenAt);
      }
    }
  });

  it.each<[string, FaultOutcome, RegExp]>([
    [
      'malformed JSON',
      { kind: 'malformed', endpoint: 'GET /calendars/{event_id}/slots' },
      /^GET \/calendars\/\{event_id\}\/slots returned an invalid payload at \(body\)/,
    ],
    [
      'an invalid shape',
      { kind: 'drift', variant: 'invalidShape', endpoint: 'GET /events' },
      /^GET \/events returned an invalid payload/,
    ],
    [
      'an overview in another zone than the one asked for',
      { kind: 'drift', variant: 'zoneNotAsked', endpoint: 'GET /calendars/{event_id}' },
      /^GET \/calendars\/\{event_id\} returned an invalid payload at timezone: is UTC, not the zone asked for \(Europe\/Berlin\)$/,
    ],
  ])(
    'fails the run with its reason on %s and keeps the last good snapshot',
    async (_name, fault, message) => {
      h.sim.control.setFaults({ queue: [fault] });
      const slotsBefore = await storedOpenSlots(h.clients.prisma, connectionId);
      const rowsBefore = await snapshotRowCounts(h.clients.prisma);
      const version = await feedVersion();

      await expect(syncOnce()).rejects.toThrow(SyncFailedError);

      const run = await latestRun();
      expect(run.outcome).toBe('failed');
      expect(run.errorCode).toBe('invalid_payload');
      expect(run.errorMessage).toMatch(message);
      expect(await storedOpenSlots(h.clients.prisma, connectionId)).toEqual(slotsBefore);
      expect(await snapshotRowCounts(h.clients.prisma)).toEqual(rowsBefore);
      expect(await feedVersion()).toBe(version);
      const connection = await h.clients.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } });
      expect(connection.lastSyncOutcome).toBe('failed');
      expect(connection.status).toBe('active');
    },
  );

  it('syncs overviews with a null first date, date-times without offset and months as strings, stored as sent', async () => {
    // A month off to be sent as a string (seeded user 0 has none).
    h.sim.control.setDisabledDates(userId, { months: [8] });
    h.sim.control.setFaults({
      drift: { firstAvailableNull: true, datesWithoutOffset: true, monthsAsStrings: true },
    });
    try {
      await syncOnce();
      expect((await latestRun()).outcome).toBe('succeeded');
      expect(await storedOpenSlots(h.clients.prisma, connectionId)).toEqual(
        expectedSync(h.sim, email, h.clock.now(), 28).slots,
      );
      const stored = (await currentOverviews()).map((o) => o.availability);
      expect(stored.length).toBeGreaterThan(0);
      for (const availability of stored) {
        expect(availability.first_available_date).toBeNull();
        expect(availability.last_available_date).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00$/);
        expect(availability.disabled_dates?.months).toEqual(['8']);
      }
    } finally {
      h.sim.control.setFaults({
        drift: { firstAvailableNull: false, datesWithoutOffset: false, monthsAsStrings: false },
      });
    }
  });

  it('stores Berlin midnight sent as …T23:00:00Z as sent, and it reads as the date the plain overview named', async () => {
    await syncOnce();
    const plain = await currentOverviews();
    expect(plain[0]?.timezone).toBe('Europe/Berlin');
    expect(plain[0]?.availability.first_available_date).toMatch(/^2026-03-\d{2}$/);
    h.sim.control.setFaults({ drift: { datesInUtc: true } });
    try {
      await syncOnce();
      expect((await latestRun()).outcome).toBe('succeeded');
      const drifted = await currentOverviews();
      expect(drifted).toHaveLength(plain.length);
      drifted.forEach((overview, i) => {
        const sent = overview.availability.first_available_date ?? '';
        // The first dates are in March, before the switch to summer time: midnight is 23:00 UTC.
        expect(sent).toMatch(/^2026-03-\d{2}T23:00:00Z$/);
        expect(calendarDateIn(sent, overview.timezone)).toBe(plain[i]?.availability.first_available_date);
      });
    } finally {
      h.sim.control.setFaults({ drift: { datesInUtc: false } });
    }
  });

  it('accepts the payload drift the real service is known to send', async () => {
    h.sim.control.setFaults({
      drift: { monthsAsStrings: true, firstAvailableAsDateTime: true, invalidShapes: false },
    });
    try {
      await syncOnce();
      expect((await latestRun()).outcome).toBe('succeeded');
      expect(await storedOpenSlots(h.clients.prisma, connectionId)).toEqual(
        expectedSync(h.sim, email, h.clock.now(), 28).slots,
      );
    } finally {
      h.sim.control.setFaults({
        drift: { monthsAsStrings: false, firstAvailableAsDateTime: false, invalidShapes: false },
      });
    }
  });
});
