// A host's slot is its server's capacity (issue 43): a push holds it while it talks to the server and lets it go
// once the last request is answered, before it records that answer in Postgres, so the next push to the server
// is not kept waiting on slotfeed's own bookkeeping. With one slot per host, whether another worker could take
// the host's slot is asked (of the real slots in Redis) at each record a push makes. A push answered 429 with
// Retry-After holds the host back before it lets its slots go, so no push waiting in line is handed one in
// between. A push takes its place in the host's line before it reads its feed: with none free it is sent back
// having read nothing, and a push that fails before it talks to the server gives its place back. Against a real
// Radicale, behind a fault proxy of the test's own for the 429.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createHostLimits, isHostWait, slotsHeldTogether } from '../../src/destinations/host-limits.js';
import { HostWaitError, pushDestination, type PushDeps } from '../../src/destinations/push-destination.js';
import type { HostGate, HostPlace } from '../../src/destinations/host-gate.js';
import { startCalDavServer, type CalDavTestServer } from '../support/caldav-servers.js';
import { patient } from '../support/patience.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { startFaultProxy, type FaultProxy } from './helpers/fault-proxy.js';
import { bookNextSlotAndSync, connectedWithDestination } from './helpers/feed-destination.js';

let server: CalDavTestServer;
let proxy: FaultProxy;
let h: WebHarness;

beforeAll(async () => {
  server = await startCalDavServer('radicale');
  proxy = await startFaultProxy(server.baseUrl);
  h = await createWebHarness('caldav_slot_hold', {
    env: { CALDAV_ALLOW_PRIVATE_TARGETS: 'true', CALDAV_HOST_CONCURRENCY: '1' },
  });
}, patient(30_000));
afterAll(async () => {
  await h?.close();
  await proxy?.close();
  await server?.close();
});

it('a push lets its host’s slot go once the server has answered, before it records the answer', async () => {
  const { connectionId, destination } = await connectedWithDestination(h, 0, {
    serverUrl: server.baseUrl,
    username: server.username,
    password: server.password,
  });
  const host = new URL(destination.calendarUrl).host;
  // Another worker's view of the host's one slot.
  const otherWorker = createHostLimits(h.sync.clients.redis, {
    concurrency: 1,
    perSecond: 0,
    slotTimeoutMs: 60_000,
    keyPrefix: `${h.sync.redis.prefix}:caldav-host`,
  });
  const slotFree = async () => {
    const entered = await otherWorker.enter(host, 1);
    if (isHostWait(entered)) return false;
    await entered.release();
    return true;
  };
  const real = h.sync.services.caldavPush;
  const freeAtRecord: boolean[] = [];
  const deps: PushDeps = {
    ...real,
    destinations: {
      ...real.destinations,
      recordWritten: async (...args) => {
        freeAtRecord.push(await slotFree());
        return real.destinations.recordWritten(...args);
      },
      forgetWritten: async (...args) => {
        freeAtRecord.push(await slotFree());
        return real.destinations.forgetWritten(...args);
      },
      // A push of one write records it with the push's end.
      writtenAndSucceeded: async (...args) => {
        freeAtRecord.push(await slotFree());
        return real.destinations.writtenAndSucceeded(...args);
      },
    },
  };
  // The first push writes the whole feed, one event after another through the one slot.
  expect(await pushDestination(deps, destination.id)).toBe('reconciled');
  expect(freeAtRecord.length).toBeGreaterThan(1);
  // Every write but the last is recorded with the slot still held for the next; the last one's record is not.
  expect(freeAtRecord).toEqual([...freeAtRecord.slice(0, -1).map(() => false), true]);

  // One slot booked upstream: after the sync, one block of the feed shrinks, and the push writes that change.
  await bookNextSlotAndSync(h, connectionId);
  freeAtRecord.length = 0;
  expect(await pushDestination(deps, destination.id)).toBe('pushed');
  expect(freeAtRecord.at(-1)).toBe(true);
  expect(await h.sync.stores.caldavDestinations.get(destination.id)).toMatchObject({
    pendingChanges: 0,
    lastError: null,
  });
});

it('a push answered 429 with Retry-After holds its host back before it lets its slots go', async () => {
  const { destination } = await connectedWithDestination(h, 1, {
    serverUrl: proxy.url,
    username: server.username,
    password: server.password,
  });
  const host = new URL(destination.calendarUrl).host;
  const real = h.sync.services.caldavPush;
  const gate = real.hosts!;
  const happened: string[] = [];
  const deps: PushDeps = {
    ...real,
    hosts: {
      ...gate,
      takePlace: (placeHost) => {
        const place = gate.takePlace(placeHost);
        if (isHostWait(place)) return place;
        return {
          ...place,
          enter: async (lanes) => {
            const entered = await place.enter(lanes);
            if (isHostWait(entered)) return entered;
            return slotsHeldTogether(
              entered.held.map((slot) => ({
                release: async () => {
                  happened.push('slot let go');
                  await slot.release();
                },
              })),
            );
          },
        };
      },
      holdBack: async (...args) => {
        happened.push('host held back');
        await gate.holdBack(...args);
      },
    },
  };
  const removeFault = proxy.install((request) =>
    request.method === 'PUT' ? { kind: 'answer', status: 429, headers: { 'retry-after': '60' } } : undefined,
  );
  try {
    expect(await pushDestination(deps, destination.id)).toBe('failed');
  } finally {
    removeFault();
    await h.sync.clients.redis.del(`${h.sync.redis.prefix}:caldav-host:rate:${host}:paused-until`);
  }
  expect(happened).toEqual(['host held back', 'slot let go']);
});

/** Every place free in the host's line of this worker, taken: how many, and a way to leave them all. */
function takeEveryPlace(gate: Pick<HostGate, 'takePlace'>, host: string) {
  const places: HostPlace[] = [];
  for (let place = gate.takePlace(host); !isHostWait(place); place = gate.takePlace(host)) places.push(place);
  return { count: places.length, leave: () => places.forEach((place) => place.leave()) };
}

it('a push with no place in its host’s line reads nothing; one that fails before it talks gives it back', async () => {
  const { destination } = await connectedWithDestination(h, 2, {
    serverUrl: server.baseUrl,
    username: server.username,
    password: server.password,
    calendarName: 'slotfeed places',
  });
  const host = new URL(destination.calendarUrl).host;
  const real = h.sync.services.caldavPush;
  const gate = real.hosts!;
  let feedReads = 0;
  let feedBroken = false;
  const deps: PushDeps = {
    ...real,
    feedEvents: async (feedId, read) => {
      feedReads++;
      if (feedBroken) throw new Error('the feed could not be read');
      return real.feedEvents(feedId, read);
    },
  };

  const every = takeEveryPlace(gate, host);
  expect(every.count).toBeGreaterThan(0);
  await expect(pushDestination(deps, destination.id)).rejects.toBeInstanceOf(HostWaitError);
  expect(feedReads).toBe(0);
  every.leave();

  feedBroken = true;
  expect(await pushDestination(deps, destination.id)).toBe('failed');
  expect(feedReads).toBe(1);
  const after = takeEveryPlace(gate, host);
  after.leave();
  expect(after.count).toBe(every.count);
});
