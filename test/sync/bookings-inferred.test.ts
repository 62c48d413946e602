// Why slots close, and bookings that are bookings: end to end against the simulator, a booking that removes
// slots of three event types is one booking of the booked length; disabling, deleting an event type or time
// passing closes slots for their own reasons and infers no booking.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { reportAsTable } from '../../src/reports/report-format.js';
import { parseReportQuery } from '../../src/reports/report-query.js';
import { runReport } from '../../src/reports/run-report.js';
import { createReportStore } from '../../src/store/reports.js';
import { syncConnection } from '../../src/sync/sync-connection.js';
import { createSyncHarness, FakeClock, type SyncHarness } from '../support/sync-harness.js';
import { simUser } from '../support/sync-truth.js';

const clock = new FakeClock(new Date('2026-03-02T07:00:00Z'));
let h: SyncHarness;
let connectionId: string;
let userId: string;
/** The starts the first test books (intro calls, one a day). */
let picked: Date[] = [];

const syncNow = () =>
  syncConnection(h.services.syncDeps, { connectionId, jobId: null, attempt: 1, maxAttempts: 1 });
const eventIdOf = (title: string) =>
  simUser(h.sim, h.sim.users[0]!.email).event_types.find((e) => e.title === title)!.event_id;
const bookingsReport = async (extra: Record<string, string> = {}) =>
  runReport(
    createReportStore(h.clients.prisma),
    parseReportQuery('bookings', { connection: connectionId, ...extra }, clock.now()),
  );
const closedBy = async (reason: string) =>
  h.clients.prisma.slot.count({ where: { connectionId, closeReason: reason as never } });

beforeAll(async () => {
  h = await createSyncHarness('bookings_inferred', { clock });
  const user = h.sim.users[0]!;
  userId = simUser(h.sim, user.email).id;
  // The seed's own bookings would blur the counts; the test books its own.
  for (const booking of simUser(h.sim, user.email).bookings)
    h.sim.control.free(booking.event_id, booking.start);
  connectionId = await h.connect(user.email);
  await syncNow();
});
afterAll(async () => {
  await h?.close();
});

describe('bookings inferred from a sync', () => {
  it('4 bookings, each removing slots of 3 event types, are 4 bookings of 30 minutes', async () => {
    const intro = eventIdOf('Intro call');
    const open = await h.clients.prisma.slot.findMany({
      where: { connectionId, upstreamEventId: intro, goneAt: null },
      orderBy: { startsAt: 'asc' },
    });
    const starts = new Set(open.map((s) => s.startsAt.getTime()));
    // Intro slots with open neighbours on both sides, on four different days: each booking is then exactly the
    // booked half hour, and no two touch.
    picked = [];
    for (const slot of open) {
      const t = slot.startsAt.getTime();
      if (!starts.has(t - 30 * 60_000) || !starts.has(t + 30 * 60_000)) continue;
      if (picked.some((p) => Math.abs(p.getTime() - t) < 86_400_000)) continue;
      picked.push(slot.startsAt);
      if (picked.length === 4) break;
    }
    expect(picked).toHaveLength(4);
    for (const start of picked) h.sim.control.book(intro, start.toISOString());
    clock.advance(600);
    const changes = await syncNow();

    expect(changes.bookingsInferred).toBe(4);
    const bookings = await h.clients.prisma.booking.findMany({
      where: { connectionId },
      orderBy: { startsAt: 'asc' },
    });
    expect(
      bookings.map((b) => [b.startsAt.toISOString(), (b.endsAt.getTime() - b.startsAt.getTime()) / 60_000]),
    ).toEqual(picked.map((p) => [p.toISOString(), 30]));
    // Each removed slots of the intro call, the deep dive and the secret type: three event types, one booking.
    expect(bookings.every((b) => b.eventIds.length === 3 && b.slotsClosed > 3)).toBe(true);
    expect(changes.closedBy.taken).toBeGreaterThan(4 * 3);

    const report = await bookingsReport();
    const summary = Object.fromEntries(report.summary.map((item) => [item.key, item.value]));
    expect(summary.bookings).toBe(4);
    expect(summary.booked_minutes).toBe(120);
    // --event keeps the bookings that closed a slot of that event type: all four closed an intro call.
    const ofIntro = await bookingsReport({ event: intro });
    expect(ofIntro.summary.find((item) => item.key === 'bookings')?.value).toBe(4);
    // The disabled event type has no slots, so no booking closed one of them.
    const ofNone = await bookingsReport({ event: eventIdOf('Old workshop') });
    expect(ofNone.summary.find((item) => item.key === 'bookings')?.value).toBe(0);
    const each = await bookingsReport({ by: 'booking' });
    expect(each.rows.map((r) => r.minutes)).toEqual([30, 30, 30, 30]);
    // Its times are UTC's while its days are the connection's zone's: the caption says which is which.
    expect(each.caption).toMatch(
      /^each inferred booking, its start and when it was seen in UTC; days in each connection's time zone, /,
    );
    expect(each.rows.every((r) => Number(r.lead_hours) > 0)).toBe(true);
    // The table shows what the caption names: each booking's start and when a sync saw it.
    const inTable = each.columns.filter((column) => column.inTable !== false).map((column) => column.label);
    expect(inTable).toEqual(expect.arrayContaining(['starts', 'seen']));
    // On an 80-column terminal both times stay whole (other columns give way) and each row still fits.
    const rows = reportAsTable(each, 80)
      .split('\n')
      .slice(3, 3 + each.rows.length);
    expect(rows).toHaveLength(each.rows.length);
    each.rows.forEach((row, i) => {
      const minute = (instant: unknown) => String(instant).slice(0, 16).replace('T', ' ');
      expect(rows[i]).toContain(minute(row.starts_at));
      expect(rows[i]).toContain(minute(row.detected_at));
      expect(rows[i]!.length).toBeLessThanOrEqual(80);
    });
  });

  it('disabling an event type closes its slots as disabled and infers no booking', async () => {
    const before = await h.clients.prisma.booking.count({ where: { connectionId } });
    h.sim.control.updateEventType(userId, eventIdOf('Deep dive'), { enabled: false });
    clock.advance(600);
    const changes = await syncNow();
    expect(changes.closedBy.event_type_disabled).toBeGreaterThan(10);
    expect(changes.closedBy.taken ?? 0).toBe(0);
    expect(changes.bookingsInferred).toBe(0);
    expect(await h.clients.prisma.booking.count({ where: { connectionId } })).toBe(before);
    expect(await closedBy('event_type_disabled')).toBe(changes.closedBy.event_type_disabled);
  });

  it('deleting an event type closes its slots as removed, and slots that started close as passed', async () => {
    const before = await h.clients.prisma.booking.count({ where: { connectionId } });
    h.sim.control.deleteEventType(userId, eventIdOf('Private 1:1'));
    clock.advance(3 * 3600);
    const changes = await syncNow();
    expect(changes.closedBy.event_type_removed).toBeGreaterThan(0);
    expect(changes.closedBy.passed).toBeGreaterThan(0);
    expect(changes.bookingsInferred).toBe(0);
    expect(await h.clients.prisma.booking.count({ where: { connectionId } })).toBe(before);
    const report = await bookingsReport();
    expect(report.summary.find((item) => item.key === 'bookings')?.value).toBe(4);
  });

  it('utilization counts time booked, cancelled and booked again once', async () => {
    const intro = eventIdOf('Intro call');
    const start = picked.at(-1)!;
    h.sim.control.free(intro, start.toISOString());
    clock.advance(600);
    await syncNow();
    h.sim.control.book(intro, start.toISOString());
    clock.advance(600);
    await syncNow();
    const seen = await h.clients.prisma.booking.count({ where: { connectionId, startsAt: start } });
    expect(seen).toBe(2);

    // Once that day has passed, its share counts the half hour once.
    clock.set(new Date(start.getTime() + 2 * 86_400_000).toISOString());
    const day = start.toISOString().slice(0, 10);
    const report = await runReport(
      createReportStore(h.clients.prisma),
      parseReportQuery(
        'utilization',
        { connection: connectionId, tz: 'UTC', from: day, to: day },
        clock.now(),
      ),
    );
    expect(report.rows.map((r) => [r.day, r.bookings, r.booked_minutes])).toEqual([[day, 2, 30]]);
  });
});
