// The demo's destination on its own Radicale (local-caldav.ts: ensureDemoDestination, setUpDemoCalendar), with the
// worker role pushing and python3-caldav reading back: added once and kept on a restart; when the server comes
// back on another port (the last run's was taken), the destination follows it without writing any event twice;
// and a calendar that cannot be added is one line, never a failed demo.
import net from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  describeDemoCalendar,
  ensureDemoDestination,
  resolveLocalCalDav,
  setUpDemoCalendar,
  type LocalCalDav,
} from '../../src/demo/local-caldav.js';
import { createLogger } from '../../src/log.js';
import { readBack } from '../support/caldav-servers.js';
import { waitFor } from '../support/wait-for.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { patient } from '../support/patience.js';

type Started = Extract<LocalCalDav, { state: 'started' }>;

const logger = createLogger({ level: 'silent' });
const login = { username: 'demo', password: 'the-demo-password' };
let workDir: string;
let h: WebHarness;
let connectionId: string;
let feedId: string;
const running: Started[] = [];

const service = () => h.sync.services.caldavDestinations;

async function startRadicale(): Promise<Started> {
  const local = await resolveLocalCalDav({
    pathEnv: '/usr/bin',
    dir: path.join(workDir, 'caldav'),
    ...login,
    logger,
  });
  if (local.state !== 'started') throw new Error(`Radicale did not start: ${JSON.stringify(local)}`);
  running.push(local);
  return local;
}

/** Waits until the destination has pushed what is pending; the feed's events in the calendar, by UID. */
async function pushedEvents(destinationId: string) {
  const destination = await waitFor(
    () => service().get(destinationId),
    (d) => d.pendingChanges === 0 && d.reconcileRequestedAt === null && d.lastPushAt !== null,
    { what: `destination ${destinationId} pushed` },
  );
  expect(destination.state).toBe('active');
  return (await readBack(login, destination.calendarUrl))
    .filter((event) => event.marker === feedId)
    .map((event) => event.uid)
    .sort();
}

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'slotfeed-demo-calendar-'));
  h = await createWebHarness('demo_calendar', { env: { CALDAV_ALLOW_PRIVATE_TARGETS: 'true' } });
  const connected = await h.connectViaWeb(h.sync.sim.users[0]!.email);
  connectionId = connected.connectionId;
  feedId = (await h.sync.stores.feeds.ensureDefaultFeed(connectionId)).feed.id;
  await h.syncNow(connectionId);
  await h.sync.startRoles(['worker']);
}, patient(60_000));
afterAll(async () => {
  await h?.close();
  for (const local of running) await local.server.stop();
  await rm(workDir, { recursive: true, force: true });
});

describe('the demo’s destination', () => {
  let first: Started;
  let uids: string[];
  let calendarUrl: string;

  it('is added once, and kept when the demo starts again on the same port', async () => {
    first = await startRadicale();
    const added = await ensureDemoDestination(service(), { feedId, server: first.server, ...login });
    expect(added.outcome).toBe('added');
    calendarUrl = added.destination.calendarUrl;
    expect(calendarUrl.startsWith(first.server.baseUrl)).toBe(true);
    uids = await pushedEvents(added.destination.id);
    expect(uids.length).toBeGreaterThan(3);

    const kept = await ensureDemoDestination(service(), { feedId, server: first.server, ...login });
    expect(kept).toMatchObject({ outcome: 'kept', destination: { id: added.destination.id } });
    expect(await service().list({ feedId })).toHaveLength(1);
  });

  it('follows the server to another port, its events adopted, none written twice', async () => {
    await first.server.stop();
    // The last run's port taken by another program while the demo was stopped.
    const squatter = net.createServer();
    await new Promise<void>((resolve) => squatter.listen(first.server.port, '127.0.0.1', resolve));
    try {
      const second = await startRadicale();
      expect(second.server.port).not.toBe(first.server.port);
      const moved = await ensureDemoDestination(service(), { feedId, server: second.server, ...login });
      expect(moved.outcome).toBe('moved');
      // One destination of the feed: the one left on the old port is gone.
      expect((await service().list({ feedId })).map((d) => d.id)).toEqual([moved.destination.id]);
      // The same calendar (the same data directory), reached on the new port.
      expect(new URL(moved.destination.calendarUrl).pathname).toBe(new URL(calendarUrl).pathname);
      expect(await pushedEvents(moved.destination.id)).toEqual(uids);
      const text = describeDemoCalendar({
        local: second,
        demo: moved,
        accountName: 'Ada',
        cli: 'node dist/cli.js',
      });
      expect(text).toContain(`port ${second.server.port} this time`);
      expect(text).toContain(`user demo, password ${login.password}`);
      await second.server.stop();
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
  });

  it('one that cannot be added is one line, and the demo goes on', async () => {
    const stopped = running.at(-1)!;
    await h.sync.db.prisma.caldavDestination.deleteMany({ where: { feedId } });
    const text = await setUpDemoCalendar({
      local: stopped,
      destinations: service(),
      feeds: h.sync.stores.feeds,
      account: { name: 'Ada', connectionId },
      cli: 'node dist/cli.js',
    });
    expect(text).toMatch(
      /^CalDAV: the demo's calendar could not be added as a destination \(.+\); the demo goes on without it$/,
    );
    expect(text.split('\n')).toHaveLength(1);
  });
});
