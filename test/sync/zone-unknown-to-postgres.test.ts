// An account whose Calendbook zone luxon knows but Postgres does not (issue 41, finding 13): `US/Pacific-New`,
// an old alias of America/Los_Angeles that ICU still resolves and Postgres 15's tzdata dropped. Zone dates are
// computed in luxon only, so the account syncs on: its first whole sync, then scheduled partial pulls that count
// its bookable days and follow a booking. The simulated world is made once, its user's zone set in the state
// file, and started again from it (the simulator has no control to change a zone).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { IANAZone } from 'luxon';
import { parseReportQuery, type RawReportQuery, type ReportName } from '../../src/reports/report-query.js';
import { runReport } from '../../src/reports/run-report.js';
import { startSimulator } from '../../src/simulator/index.js';
import { createReportStore } from '../../src/store/reports.js';
import { syncConnection } from '../../src/sync/sync-connection.js';
import { createSyncHarness, FakeClock, type SyncHarness } from '../support/sync-harness.js';
import { simUser } from '../support/sync-truth.js';

const ZONE = 'US/Pacific-New';
const WORLD = { users: 1, eventTypesPerUser: 2, seed: 7 };

let h: SyncHarness;
let dir: string;
let id: string;
const clock = new FakeClock(new Date('2026-03-02T17:00:00Z'));

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'slotfeed-zone-'));
  const stateFile = path.join(dir, 'simulator.json');
  const made = await startSimulator({ ...WORLD, now: clock.now, stateFile });
  await made.close();
  const state = JSON.parse(await readFile(stateFile, 'utf8')) as {
    users: { profile: { timezone: string } }[];
  };
  state.users[0]!.profile.timezone = ZONE;
  await writeFile(stateFile, JSON.stringify(state), { mode: 0o600 });
  h = await createSyncHarness('zone_unknown_to_postgres', { clock, simulator: { ...WORLD, stateFile } });
  id = await h.connect(h.sim.users[0]!.email);
});
afterAll(async () => {
  await h?.close();
  await rm(dir, { recursive: true, force: true });
});

const sync = (bands?: string[]) =>
  syncConnection(h.services.syncDeps, {
    connectionId: id,
    jobId: null,
    attempt: 1,
    maxAttempts: 1,
    ...(bands ? { bands } : {}),
  });

describe('an account in a zone Postgres does not know', () => {
  it('is a zone luxon knows and this Postgres refuses', async () => {
    expect(IANAZone.isValidZone(ZONE)).toBe(true);
    expect(simUser(h.sim, h.sim.users[0]!.email).timezone).toBe(ZONE);
    await expect(h.clients.prisma.$queryRaw`SELECT now() AT TIME ZONE ${ZONE}`).rejects.toThrow(
      /time zone "US\/Pacific-New" not recognized/,
    );
  });

  it('syncs on after its first whole sync: a partial pull follows a booking', async () => {
    await sync();
    const stored = await h.clients.prisma.connection.findUniqueOrThrow({ where: { id } });
    expect(stored.timezone).toBe(ZONE);

    // The earliest slot still to come is on the first date people can book: the near band's, however counted.
    clock.advance(300);
    const slot = await h.clients.prisma.slot.findFirstOrThrow({
      where: { connectionId: id, goneAt: null, startsAt: { gt: clock.now() } },
      orderBy: { startsAt: 'asc' },
    });
    h.sim.control.book(slot.upstreamEventId, slot.startsAt.toISOString());

    const changes = await sync(['days 0-1']);
    expect(changes.changedByPulledBand).toEqual({ 'days 0-1': expect.any(Number) });
    const after = await h.clients.prisma.slot.findUniqueOrThrow({ where: { id: slot.id } });
    expect({ gone: after.goneAt !== null, reason: after.closeReason }).toEqual({
      gone: true,
      reason: 'taken',
    });
    const run = await h.clients.prisma.syncRun.findFirstOrThrow({
      where: { connectionId: id },
      orderBy: { startedAt: 'desc' },
    });
    expect({ outcome: run.outcome, bands: run.bands }).toEqual({ outcome: 'succeeded', bands: ['days 0-1'] });
  });

  it.each([
    ['availability', {}],
    ['bookings', { by: 'day' }],
    ['bookings', { by: 'week' }],
    ['bookings', { by: 'weekday-hour' }],
  ] as [ReportName, RawReportQuery][])(
    'counts its %s report %j in its own zone, as in the zone it is another name of',
    async (report, raw) => {
      const reports = createReportStore(h.clients.prisma);
      const own = await runReport(reports, parseReportQuery(report, { ...raw, connection: id }, clock.now()));
      const named = await runReport(
        reports,
        parseReportQuery(report, { ...raw, connection: id, tz: 'America/Los_Angeles' }, clock.now()),
      );
      expect(own.rows.length).toBeGreaterThan(0);
      expect(own.rows).toEqual(named.rows);
      // --tz with the same name as the account's own zone reads the same.
      const given = await runReport(
        reports,
        parseReportQuery(report, { ...raw, connection: id, tz: ZONE }, clock.now()),
      );
      expect(given.rows).toEqual(named.rows);
    },
  );
});
