// CalDAV push against a real Radicale behind a fault-injecting proxy of the test's own (issue 34): the server
// answering 500 and 503 with and without Retry-After, a connection cut after a PUT's body was sent, a DELETE
// that times out, a PUT answered without an ETag, a server that rewrites the UID or the href it was given, and a
// calendar the person deleted. After each fault ends, the calendar holds each of the feed's events exactly once,
// as the feed shows them, the person's own event unchanged, and the destination is not left failing; while the
// server fails, the requests sent to it stay bounded (counted at the proxy). Time is the harness's injected
// clock: a backoff ends when the test moves the clock, not when a timer fires.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { caldavJobId, dispatchDuePushes } from '../../src/destinations/caldav-queue.js';
import { createHostLimits, HOST_HOLD_MAX_MS } from '../../src/destinations/host-limits.js';
import { RETRY_AFTER_MAX_MS, RETRY_BASE_MS } from '../../src/destinations/push-policy.js';
import type { CaldavDestinationRecord } from '../../src/store/caldav-destinations.js';
import { eventsOf } from '../feeds/feed-fixtures.js';
import {
  addOwnEvent,
  readBack,
  startCalDavServer,
  type CalDavTestServer,
} from '../support/caldav-servers.js';
import type { FakeClock } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import {
  startFaultProxy,
  type Fault,
  type FaultAction,
  type FaultProxy,
  type ProxiedRequest,
} from './helpers/fault-proxy.js';
import { patient } from '../support/patience.js';

/** Requests one failed push may send: opening the calendar, then at most one write per lane (four). */
const REQUESTS_PER_FAILED_PUSH = 6;

let server: CalDavTestServer;
let proxy: FaultProxy;
let h: WebHarness;
let feedId: string;
let token: string;
let destination: CaldavDestinationRecord;
let view: 'free' | 'slots' = 'slots';
const DAYS = 3;
const own = {
  uid: 'person-own-event',
  summary: 'Dentist',
  start: '2026-03-03T10:00:00Z',
  end: '2026-03-03T11:00:00Z',
};
const clock = () => h.sync.clock as FakeClock;
const store = () => h.sync.stores.caldavDestinations;
const service = () => h.sync.services.caldavDestinations;

/** The calendar on the server itself, past the proxy. */
const direct = (url: string) => url.replace(new URL(proxy.url).origin, new URL(server.baseUrl).origin);

/** A change that makes the next push delete every event and write every event anew (free blocks ↔ slots). */
async function changeTheFeed() {
  view = view === 'slots' ? 'free' : 'slots';
  await h.feeds.updateOptions(feedId, { view, days: DAYS }, clock().now());
}

const current = () => store().get(destination.id);
const until = (holds: (d: CaldavDestinationRecord) => boolean, what: string) =>
  waitFor(current, holds, { what });
const settled = () =>
  until(
    (d) => d.state === 'active' && d.pendingChanges === 0 && d.reconcileRequestedAt === null,
    'the destination pushed and active',
  );
/**
 * The destination's next try, now: the clock moved to the end of its backoff. A Retry-After also held back the
 * whole host in Redis, by Redis's own clock, and delayed its queued push there: both end now too.
 */
async function retryNow() {
  const { retryAt } = await current();
  if (retryAt !== null) clock().set(retryAt.toISOString());
  const redis = h.sync.clients.redis;
  const holds = await redis.keys(`${h.sync.redis.prefix}:caldav-host:rate:*:paused-until`);
  if (holds.length > 0) await redis.del(...holds);
  for (const job of await h.sync.clients.caldavQueue.getDelayed()) await job.promote();
}

/** The feed as its .ics shows it, against the calendar as python3-caldav reads it. */
async function expectCalendarToBeTheFeed() {
  const response = await h.get(`/feeds/${token}.ics`);
  const stamp = (value: string | undefined) =>
    value?.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z') ?? null;
  const feed = eventsOf(response.text)
    .map((event) => ({
      uid: event.get('UID')!,
      summary: event.get('SUMMARY')!,
      dtstart: stamp(event.get('DTSTART')),
      dtend: stamp(event.get('DTEND')),
    }))
    .sort((a, b) => (a.uid < b.uid ? -1 : 1));
  expect(feed.length).toBeGreaterThan(2);
  const events = await readBack(server, direct(destination.calendarUrl));
  const slotfeeds = events
    .filter((event) => event.marker !== null)
    .map(({ uid, summary, dtstart, dtend }) => ({ uid, summary, dtstart, dtend }));
  expect(slotfeeds).toEqual(feed);
  expect(events.filter((event) => event.marker === null)).toEqual([
    expect.objectContaining({ uid: own.uid, summary: own.summary, dtstart: own.start, dtend: own.end }),
  ]);
}

/** `work` with `fault` installed at the proxy; the server is well again afterwards, whatever happened. */
async function during<T>(fault: Fault, work: () => Promise<T>): Promise<T> {
  proxy.install(fault);
  try {
    return await work();
  } finally {
    proxy.clear();
  }
}

/** `action` for the first request `picks` chooses, and for no other. */
function once(picks: (request: ProxiedRequest) => boolean, action: FaultAction): Fault {
  let done = false;
  return (request) => {
    if (done || !picks(request)) return undefined;
    done = true;
    return action;
  };
}

/** A fault for the PUTs only. */
const onPuts =
  (action: FaultAction, picks: (request: ProxiedRequest) => boolean = (r) => r.method === 'PUT'): Fault =>
  (request) =>
    picks(request) ? action : undefined;

const isCreate = (request: ProxiedRequest) =>
  request.method === 'PUT' && request.headers['if-none-match'] === '*';

beforeAll(async () => {
  server = await startCalDavServer('radicale');
  proxy = await startFaultProxy(server.baseUrl);
  h = await createWebHarness('caldav_faults', {
    env: {
      CALDAV_ALLOW_PRIVATE_TARGETS: 'true',
      CALDAV_DISPATCH_INTERVAL_MS: '100',
      CALDAV_TIMEOUT_SECONDS: '2',
    },
  });
  const connected = await h.connectViaWeb(h.sync.sim.users[0]!.email);
  await h.syncNow(connected.connectionId);
  const created = await h.feeds.create({
    connectionId: connected.connectionId,
    options: { view, days: DAYS },
  });
  feedId = created.feed.id;
  token = created.token;
  await h.sync.startRoles(['worker']);
  destination = await service().add({
    feedId,
    serverUrl: proxy.url,
    calendarName: 'Faults',
    username: server.username,
    password: server.password,
  });
  await settled();
  await addOwnEvent(server, direct(destination.calendarUrl), own);
  await expectCalendarToBeTheFeed();
}, patient(30_000));
afterAll(async () => {
  await h?.close();
  await proxy?.close();
  await server?.close();
});

describe('CalDAV push through server faults (Radicale behind a fault-injecting proxy)', () => {
  it('with the server well, a change is pushed with its writes alone: the calendar is not looked for again', async () => {
    proxy.resetCount();
    await changeTheFeed();
    await settled();
    const sent = proxy.requests();
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.filter((request) => !/^(PUT|DELETE) /.test(request))).toEqual([]);
    await expectCalendarToBeTheFeed();
  });

  it('500, then 503 with and without Retry-After: backed off as said, a bounded number of requests each time, and whole once the server answers again', async () => {
    proxy.resetCount();
    const removeFault = proxy.install(() => ({ kind: 'answer', status: 500 }));
    try {
      await changeTheFeed();
      let failed = await until((d) => d.consecutiveFailures === 1, 'the first failure');
      expect(failed.state).toBe('failing');
      expect(failed.retryAt!.getTime() - clock().now().getTime()).toBe(RETRY_BASE_MS);
      expect(proxy.requests().length).toBeLessThanOrEqual(REQUESTS_PER_FAILED_PUSH);
      // In its backoff it is not due: no push is queued, no request sent.
      const sent = proxy.requests().length;
      expect(await dispatchDuePushes(store(), h.sync.clients.caldavQueue, 3 * 3600_000, clock().now())).toBe(
        0,
      );
      expect(proxy.requests().length).toBe(sent);

      await retryNow();
      failed = await until((d) => d.consecutiveFailures === 2, 'the second failure');
      expect(failed.retryAt!.getTime() - clock().now().getTime()).toBe(2 * RETRY_BASE_MS);
      expect(proxy.requests().length).toBeLessThanOrEqual(2 * REQUESTS_PER_FAILED_PUSH);

      removeFault();
      proxy.install(() => ({ kind: 'answer', status: 503, headers: { 'retry-after': '120' } }));
      await retryNow();
      failed = await until((d) => d.consecutiveFailures === 3, 'a 503 with Retry-After');
      expect(failed.retryAt!.getTime() - clock().now().getTime()).toBe(120_000);
      expect(failed.lastError).toMatch(/503.*retry after 120 s/);
      // The host as a whole is held back (by Redis's clock): no push to any of its calendars until then.
      const heldFor = Number(
        await h.sync.clients.redis.get(
          `${h.sync.redis.prefix}:caldav-host:rate:${new URL(proxy.url).host}:paused-until`,
        ),
      );
      expect(heldFor).toBeGreaterThan(Date.now() + 60_000);

      proxy.clear();
      proxy.install(() => ({ kind: 'answer', status: 503 }));
      await retryNow();
      failed = await until((d) => d.consecutiveFailures === 4, 'a 503 without Retry-After');
      expect(failed.retryAt!.getTime() - clock().now().getTime()).toBe(8 * RETRY_BASE_MS);
      expect(proxy.requests().length).toBeLessThanOrEqual(4 * REQUESTS_PER_FAILED_PUSH);
    } finally {
      proxy.clear();
    }
    await retryNow();
    await settled();
    await expectCalendarToBeTheFeed();
  });

  it('a 503 asking for a year (in seconds, or as a far date): the destination and its whole host wait 6 h at most', async () => {
    const heldUntil = async () =>
      Number(
        await h.sync.clients.redis.get(
          `${h.sync.redis.prefix}:caldav-host:rate:${new URL(proxy.url).host}:paused-until`,
        ),
      );
    for (const retryAfter of ['31536000', 'Fri, 01 Jan 2100 00:00:00 GMT']) {
      const before = (await current()).consecutiveFailures;
      const failed = await during(
        () => ({ kind: 'answer', status: 503, headers: { 'retry-after': retryAfter } }),
        async () => {
          await changeTheFeed();
          return until((d) => d.consecutiveFailures > before, `a 503 with Retry-After: ${retryAfter}`);
        },
      );
      expect([retryAfter, failed.retryAt!.getTime() - clock().now().getTime()]).toEqual([
        retryAfter,
        RETRY_AFTER_MAX_MS,
      ]);
      // The host's hold, by Redis's clock (the machine's): no longer than the destination's own wait.
      const heldForMs = (await heldUntil()) - Date.now();
      expect([retryAfter, heldForMs <= HOST_HOLD_MAX_MS]).toEqual([retryAfter, true]);
      expect(heldForMs).toBeGreaterThan(HOST_HOLD_MAX_MS - 60_000);
      await retryNow();
      await settled();
    }
    await expectCalendarToBeTheFeed();
  });

  it('a hold that begins during a push (another push’s 503): it stops before its next request and waits outside the worker’s slots, then ends whole', async () => {
    const before = await current();
    const { caldavQueue, redis } = h.sync.clients;
    let answer!: () => void;
    const held = new Promise<void>((resolve) => (answer = resolve));
    proxy.resetCount();
    const writes = () => proxy.requests().filter((request) => /^(PUT|DELETE) /.test(request));
    await during(
      onPuts({ kind: 'hold', until: held }, (r) => /^(PUT|DELETE)$/.test(r.method)),
      async () => {
        await changeTheFeed();
        await waitFor(
          async () => writes().length,
          (count) => count > 0,
          { what: 'the push’s first writes' },
        );
        // Another push to this server was answered 503 with Retry-After meanwhile.
        const hosts = createHostLimits(redis, {
          concurrency: 4,
          perSecond: 0,
          slotTimeoutMs: 60_000,
          keyPrefix: `${h.sync.redis.prefix}:caldav-host`,
        });
        await hosts.holdBack(new URL(proxy.url).host, 3600_000);
        answer();
      },
    );
    await waitFor(
      async () => (await caldavQueue.getJob(caldavJobId(destination.id)))?.getState(),
      (state) => state === 'delayed',
      { what: 'the push waiting for the host in the delayed set' },
    );
    // The writes under way were answered and recorded; none was sent after the hold began.
    expect(writes().length).toBeLessThanOrEqual(4);
    const waiting = await current();
    expect(waiting).toMatchObject({ state: 'active', consecutiveFailures: before.consecutiveFailures });
    expect(waiting.pendingChanges).toBeGreaterThan(0);
    await retryNow();
    await settled();
    await expectCalendarToBeTheFeed();
  });

  it('a connection cut after the PUT’s body was sent (written, its answer lost): nothing lost or doubled', async () => {
    // Every PUT's answer lost: one sent on a kept connection is sent again on another (http-transport.ts), and
    // that one's answer is lost too, so the push fails.
    const failed = await during(
      (r) => (r.method === 'PUT' ? { kind: 'cut-after-forward' } : undefined),
      async () => {
        await changeTheFeed();
        return until((d) => d.state === 'failing', 'the push failing');
      },
    );
    expect(failed.lastError).toMatch(/could not reach the server/);
    await retryNow();
    await settled();
    await expectCalendarToBeTheFeed();
  });

  it('a DELETE that times out: tried again, and the event is gone once', async () => {
    const failed = await during(
      once((r) => r.method === 'DELETE', { kind: 'hang' }),
      async () => {
        await changeTheFeed();
        return until((d) => d.state === 'failing', 'the push failing');
      },
    );
    expect(failed.lastError).toMatch(/no answer within 2000 ms/);
    await retryNow();
    await settled();
    await expectCalendarToBeTheFeed();
  });

  it('PUTs answered without an ETag (as Google’s CalDAV does): the ETag is read back, and later changes stay conditional', async () => {
    const withoutEtag = onPuts({
      kind: 'rewrite-answer',
      rewrite: (answer) => {
        const headers = { ...answer.headers };
        delete headers.etag;
        return { ...answer, headers };
      },
    });
    await during(withoutEtag, async () => {
      await changeTheFeed();
      await settled();
    });
    for (const record of (await store().writtenEvents(destination.id)).values())
      expect(record.etag).toMatch(/\S/);
    await expectCalendarToBeTheFeed();
    await changeTheFeed();
    await settled();
    await expectCalendarToBeTheFeed();
  });

  it('a server that rewrites the UID it was given: a reconciliation finds the events where slotfeed wrote them and writes them back', async () => {
    const uidRewritten = onPuts({
      kind: 'rewrite-request',
      rewrite: (put) => ({
        ...put,
        body: Buffer.from(put.body.toString('utf8').replace(/^UID:/m, 'UID:server-made-')),
      }),
    });
    await during(uidRewritten, async () => {
      await changeTheFeed();
      await settled();
    });
    await service().reconcileNow(destination.id);
    await settled();
    await expectCalendarToBeTheFeed();
  });

  it('a server that stores new events at another href than the one given: found by UID, changed and deleted there', async () => {
    const hrefMoved = onPuts(
      {
        kind: 'rewrite-request',
        rewrite: (put) => ({ ...put, path: put.path.replace(/\/([^/]+)$/, '/moved-$1') }),
      },
      isCreate,
    );
    await during(hrefMoved, async () => {
      await changeTheFeed();
      await settled();
    });
    // The next change deletes every one of them where the server put it.
    await changeTheFeed();
    await settled();
    await expectCalendarToBeTheFeed();
    await service().reconcileNow(destination.id);
    await settled();
    await expectCalendarToBeTheFeed();
  });

  it('a calendar the person deleted: paused with the reason (not failing, no retries); resuming makes it again', async () => {
    const deleted = await fetch(direct(destination.calendarUrl), {
      method: 'DELETE',
      headers: {
        authorization: `Basic ${Buffer.from(`${server.username}:${server.password}`).toString('base64')}`,
      },
    });
    expect(deleted.ok).toBe(true);
    await changeTheFeed();
    const paused = await until((d) => d.state === 'paused', 'the destination paused');
    expect(paused.lastError).toMatch(/no longer on the server \(deleted there\?\)/);
    proxy.resetCount();
    clock().advance(24 * 3600);
    expect(await dispatchDuePushes(store(), h.sync.clients.caldavQueue, 3 * 3600_000, clock().now())).toBe(0);
    expect(proxy.requests()).toEqual([]);

    await service().setPaused(destination.id, false);
    await settled();
    // The person's own event went with the calendar they deleted; slotfeed's are back, each once.
    await addOwnEvent(server, direct(destination.calendarUrl), own);
    await expectCalendarToBeTheFeed();
  });
});
