// The unit costs of what leaves slotfeed after a sync (issue 42, unit-costs.ts): a CalDAV push (Radicale behind a
// byte-counting proxy), a webhook delivery (a loopback receiver), and the web role's answers to calendar apps
// (a feed's 200 and 304) and to a person opening a share page. The worker is the production build's, already
// running on the bench's own Redis with no sync left to do; what it and Redis do idle (BullMQ's waits, the
// dispatchers' polls) is measured first and taken off each measure. Changes are committed through the store, as a
// sync's commit writes them (caldav-push.ts and webhooks.ts do the same), eight at a time.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { openCalDavAccount } from '../../src/caldav/index.js';
import type { RedisClient } from '../../src/lib/redis-connection.js';
import { commitSuccessfulSync } from '../../src/store/snapshots.js';
import type { FetchedSlot } from '../../src/store/slot-diff.js';
import { startCalDavServer } from '../support/caldav-servers.js';
import type { SlotfeedProcess } from '../support/child-process.js';
import { startFreezableProxy } from '../support/freezable-proxy.js';
import type { SyncHarness } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { ADMIN_TOKEN, rawRequest } from '../support/web-harness.js';
import { freePort } from '../chaos/chaos-support.js';
import { check, type BenchSection } from './bench-result.js';
import { snapshotWith } from './caldav-push.js';
import { feedWithSlots } from './feed-serving.js';
import { cpuMsOf, loadAverage, round } from './process-stats.js';
import { rowWritesBetween, rowWritesByTable, settlePostgresStatistics } from './postgres-writes.js';
import { readRedisCounters, redisFiguresPer, redisUseBetween, type RedisUse } from './redis-stats.js';
import { startWorkers } from './sync-round.js';

const IDLE_SECONDS = 15;
const COMMITS_AT_ONCE = 8;
const REQUESTS_AT_ONCE = 8;
/** Open slots of the served feed: the sync round's average with 3 event types over 28 days (growth.ts). */
const FEED_SLOTS = 378;

export interface DeliveriesOptions {
  h: SyncHarness;
  /** A connection to the bench's own Redis, for INFO. */
  counters: RedisClient;
  worker: SlotfeedProcess;
  roleEnv: Record<string, string>;
  destinations: number;
  webhooks: number;
  requests: number;
}

interface Reading {
  redis: Awaited<ReturnType<typeof readRedisCounters>>;
  cpuMs: number;
  at: number;
}

const run = () => ({ id: randomUUID(), jobId: null, attempt: 1, startedAt: new Date(), callsByEndpoint: {} });

/** Slots at +2 h … from the next full hour, each 30 minutes, touching in pairs. */
function slotsAhead(count: number): FetchedSlot[] {
  const hour = Math.ceil(Date.now() / 3_600_000) * 3_600_000;
  return Array.from({ length: count }, (_, i) => {
    const startsAt = new Date(hour + (Math.floor(i / 2) * 2 + 2) * 3_600_000 + (i % 2) * 1_800_000);
    return { eventId: 'evt_bench', startsAt, endsAt: new Date(startsAt.getTime() + 1_800_000) };
  });
}

/** A connection with a first snapshot of `slots`, as its first sync would leave it. */
async function committedConnection(h: SyncHarness, slots: FetchedSlot[]): Promise<string> {
  const connection = await h.clients.prisma.connection.create({
    data: { upstreamUserId: `bench-${randomUUID()}`, timezone: 'UTC' },
  });
  const now = new Date();
  await commitSuccessfulSync(h.clients.prisma, {
    connectionId: connection.id,
    snapshot: snapshotWith(slots),
    run: run(),
    now,
    next: now,
  });
  return connection.id;
}

/** One change (the second slot booked) committed for each connection, eight at a time. */
async function commitChanges(h: SyncHarness, ids: string[], slots: FetchedSlot[]) {
  const commit = pLimit(COMMITS_AT_ONCE);
  const booked = slots.filter((_, i) => i !== 1);
  await Promise.all(
    ids.map((connectionId) =>
      commit(() =>
        commitSuccessfulSync(h.clients.prisma, {
          connectionId,
          snapshot: snapshotWith(booked),
          run: run(),
          now: new Date(),
          next: new Date(),
        }),
      ),
    ),
  );
}

export async function measureDeliveries(options: DeliveriesOptions): Promise<BenchSection[]> {
  const { h, counters, worker, destinations, webhooks } = options;
  const prisma = h.clients.prisma;
  const workerPid = worker.child.pid ?? 0;
  const read = async (pid = workerPid): Promise<Reading> => ({
    redis: await readRedisCounters(counters),
    cpuMs: cpuMsOf(pid),
    at: performance.now(),
  });
  const seconds = (from: Reading, to: Reading) => (to.at - from.at) / 1000;

  const idleFrom = await read();
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  const idleTo = await read();
  const idle = redisUseBetween(idleFrom.redis, idleTo.redis, seconds(idleFrom, idleTo));
  const idleWorkerCpuPerSecond = (idleTo.cpuMs - idleFrom.cpuMs) / seconds(idleFrom, idleTo);
  const workerCpuBetween = (from: Reading, to: Reading) =>
    to.cpuMs - from.cpuMs - idleWorkerCpuPerSecond * seconds(from, to);
  const sections: BenchSection[] = [];

  // CalDAV: one calendar per destination on Radicale, reached through a proxy that counts the bytes.
  const server = await startCalDavServer('radicale');
  const proxy = await startFreezableProxy({ host: '127.0.0.1', port: Number(new URL(server.baseUrl).port) });
  try {
    const credentials = { username: server.username, password: server.password };
    const account = await openCalDavAccount({
      serverUrl: `http://127.0.0.1:${proxy.port}/`,
      ...credentials,
      allowPrivateTargets: true,
    });
    const slots = slotsAhead(6);
    const ids: string[] = [];
    const setup = pLimit(COMMITS_AT_ONCE);
    await Promise.all(
      Array.from({ length: destinations }, (_, i) =>
        setup(async () => {
          const connectionId = await committedConnection(h, slots);
          const { feed } = await h.stores.feeds.ensureDefaultFeed(connectionId);
          const calendar = await account.makeCalendar({ displayName: `unit costs ${i}` });
          await h.services.caldavDestinations.add({
            feedId: feed.id,
            serverUrl: calendar.url,
            ...credentials,
          });
          ids.push(connectionId);
        }),
      ),
    );
    // The worker's dispatcher (it polls Postgres) writes every feed first: not measured.
    await waitFor(
      () =>
        prisma.caldavDestination.count({
          where: { pendingChanges: 0, lastReconciledAt: { not: null }, lastError: null },
        }),
      (n) => n === destinations,
      { timeoutMs: 600_000, intervalMs: 500, what: 'the first CalDAV pushes' },
    );
    await settlePostgresStatistics();
    const rowsBefore = await rowWritesByTable(h);
    const bytesBefore = proxy.bytes();
    const from = await read();
    const committedFrom = new Date();
    await commitChanges(h, ids, slots);
    await waitFor(
      () =>
        prisma.caldavDestination.count({ where: { pendingChanges: 0, lastPushAt: { gte: committedFrom } } }),
      (n) => n === destinations,
      { timeoutMs: 600_000, intervalMs: 200, what: 'the pushes of the changes' },
    );
    const to = await read();
    const bytesAfter = proxy.bytes();
    await settlePostgresStatistics();
    const caldavRows = rowWritesBetween(rowsBefore, await rowWritesByTable(h), (t) => t.startsWith('caldav'));
    const use = redisUseBetween(from.redis, to.redis, seconds(from, to), idle);
    sections.push({
      benchmark: 'unit costs: a CalDAV push (Radicale, production build, own Redis)',
      inputs: {
        destinations,
        change: 'one event of three rewritten under If-Match per destination',
        loadAverage1m: loadAverage(),
      },
      figures: {
        pushes: destinations,
        ...redisFiguresPer('Push', use, destinations),
        workerCpuMsPerPush: round(workerCpuBetween(from, to) / destinations, 2),
        caldavBytesSentPerPush: round((bytesAfter.toServer - bytesBefore.toServer) / destinations, 0),
        caldavBytesReceivedPerPush: round((bytesAfter.toClient - bytesBefore.toClient) / destinations, 0),
        postgresRowWritesPerPush: round(caldavRows / destinations, 1),
      },
    });
  } finally {
    await proxy.close();
    await server.close();
  }

  // Webhooks: a loopback receiver counting what arrives.
  const received = new Set<string>();
  let bytesReceived = 0;
  const receiver = http.createServer((request, response) => {
    let body = 0;
    request.on('data', (chunk: Buffer) => (body += chunk.length));
    request.on('end', () => {
      const headers = request.rawHeaders.reduce((sum, part) => sum + part.length + 2, 0);
      bytesReceived += body + headers + `${request.method} ${request.url} HTTP/1.1\r\n`.length;
      received.add(request.url ?? '');
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    const slots = slotsAhead(24);
    const ids: string[] = [];
    for (let i = 0; i < webhooks; i++) {
      const connectionId = await committedConnection(h, slots);
      await h.stores.webhooks.create({
        owner: { connectionId },
        url: `${base}/${connectionId}`,
        events: ['availability.changed'],
      });
      ids.push(connectionId);
    }
    await settlePostgresStatistics();
    const rowsBefore = await rowWritesByTable(h);
    const from = await read();
    await commitChanges(h, ids, slots);
    await waitFor(
      async () => received.size,
      (n) => n === webhooks,
      { timeoutMs: 300_000, intervalMs: 100, what: 'every webhook delivery' },
    );
    const to = await read();
    await settlePostgresStatistics();
    const webhookRows = rowWritesBetween(rowsBefore, await rowWritesByTable(h), (t) =>
      t.startsWith('webhook'),
    );
    const use = redisUseBetween(from.redis, to.redis, seconds(from, to), idle);
    sections.push({
      benchmark: 'unit costs: a webhook delivery (production build, own Redis)',
      inputs: {
        endpoints: webhooks,
        event: 'availability.changed, one slot booked',
        loadAverage1m: loadAverage(),
      },
      figures: {
        deliveries: webhooks,
        ...redisFiguresPer('Delivery', use, webhooks),
        workerCpuMsPerDelivery: round(workerCpuBetween(from, to) / webhooks, 2),
        webhookBytesSentPerDelivery: round(bytesReceived / webhooks, 0),
        postgresRowWritesPerDelivery: round(webhookRows / webhooks, 1),
      },
    });
  } finally {
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }

  sections.push(await measureWeb(options, idle));
  return sections;
}

/** The web role's CPU and Redis per answer: a feed's 200 (render kept, and a render after a change), its 304, a share page. */
async function measureWeb(options: DeliveriesOptions, idle: RedisUse): Promise<BenchSection> {
  const { h, counters, roleEnv, requests } = options;
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const [web] = await startWorkers(
    h,
    1,
    {
      ...roleEnv,
      WEB_HOST: '127.0.0.1',
      WEB_PORT: String(port),
      PUBLIC_BASE_URL: origin,
      ADMIN_TOKEN,
      // Counted in each web process's memory; one address making thousands of requests would be refused.
      FEED_RATE_LIMIT_PER_MINUTE: '0',
    },
    'web',
  );
  try {
    const pid = web!.child.pid ?? 0;
    const feed = await feedWithSlots({ sync: h, feeds: h.stores.feeds }, FEED_SLOTS);
    // The default view (free time), as a subscriber's feed is by default.
    await h.clients.prisma.feed.update({ where: { id: feed.feedId }, data: { options: {} } });
    const { secret } = await h.stores.shareLinks.create({
      feedId: feed.feedId,
      label: 'unit costs',
      expiresAt: null,
      now: new Date(),
    });
    // Calendar services and browsers ask for gzip.
    const gzip = { 'accept-encoding': 'gzip' };
    const first = await rawRequest('GET', `${origin}${feed.path}`, { headers: gzip });
    check(first.status === 200, `the feed answered ${first.status}`);
    const plain = await rawRequest('GET', `${origin}${feed.path}`);
    const revalidate = { ...gzip, 'if-none-match': String(first.headers.etag) };
    const unchanged = await rawRequest('GET', `${origin}${feed.path}`, { headers: revalidate });
    check(unchanged.status === 304, `If-None-Match answered ${unchanged.status}`);
    const sharePath = `/share/${secret}?week=0&zone=Europe%2FBerlin`;
    const share = await rawRequest('GET', `${origin}${sharePath}`, { headers: gzip });
    check(share.status === 200, `the share page answered ${share.status}`);
    const headerBytes = (r: Awaited<ReturnType<typeof rawRequest>>) =>
      Object.entries(r.headers).reduce(
        (sum, [name, value]) => sum + name.length + String(value).length + 4,
        17,
      );

    const measure = async (
      count: number,
      path: string,
      headers: Record<string, string>,
      status: number,
      before?: () => Promise<unknown>,
    ) => {
      const from = { redis: await readRedisCounters(counters), cpuMs: cpuMsOf(pid), at: performance.now() };
      const limit = pLimit(before ? 1 : REQUESTS_AT_ONCE);
      const statuses = await Promise.all(
        Array.from({ length: count }, () =>
          limit(async () => {
            await before?.();
            return (await rawRequest('GET', `${origin}${path}`, { headers })).status;
          }),
        ),
      );
      const to = { redis: await readRedisCounters(counters), cpuMs: cpuMsOf(pid), at: performance.now() };
      const other = statuses.filter((s) => s !== status).length;
      check(
        other === 0,
        `${other} of ${count} requests to ${path.slice(0, 12)}… answered other than ${status}`,
      );
      const use = redisUseBetween(from.redis, to.redis, (to.at - from.at) / 1000, idle);
      return {
        cpuMs: (to.cpuMs - from.cpuMs) / count,
        redisCommands: use.commands / count,
        redisCpuMs: use.cpuMs / count,
      };
    };
    const kept = await measure(requests, feed.path, gzip, 200);
    const notModified = await measure(requests, feed.path, revalidate, 304);
    // A change since the last answer: the feed is read from Postgres and rendered again.
    const bump = () =>
      h.clients.prisma.connection.update({
        where: { id: feed.connectionId },
        data: { feedVersion: { increment: 1 } },
      });
    const rendered = await measure(Math.ceil(requests / 5), feed.path, gzip, 200, bump);
    const shareViews = await measure(Math.ceil(requests / 2), sharePath, gzip, 200);
    return {
      benchmark: 'unit costs: web answers (production build, own Redis)',
      inputs: {
        feedSlots: FEED_SLOTS,
        feedView: 'free (the default)',
        requestsPerPath: requests,
        requestsAtOnce: REQUESTS_AT_ONCE,
        client: 'node:http keep-alive on loopback, Accept-Encoding: gzip',
        loadAverage1m: loadAverage(),
      },
      figures: {
        feedBytesGzip: first.body.length + headerBytes(first),
        feedBytesIdentity: plain.body.length + headerBytes(plain),
        feed304Bytes: headerBytes(unchanged),
        shareBytesGzip: share.body.length + headerBytes(share),
        webCpuMsPerFeed200Kept: round(kept.cpuMs, 3),
        webCpuMsPerFeed200Rendered: round(rendered.cpuMs, 3),
        webCpuMsPerFeed304: round(notModified.cpuMs, 3),
        webCpuMsPerShareView: round(shareViews.cpuMs, 3),
        redisCommandsPerFeed200: round(kept.redisCommands, 2),
        redisCommandsPerFeed304: round(notModified.redisCommands, 2),
        redisCommandsPerShareView: round(shareViews.redisCommands, 2),
        redisCpuMsPerFeed200: round(kept.redisCpuMs, 4),
        redisCpuMsPerShareView: round(shareViews.redisCpuMs, 4),
      },
    };
  } finally {
    web!.child.kill('SIGTERM');
    await web!.exited;
  }
}
