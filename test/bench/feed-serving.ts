// Benchmark 4: serving a 1,000-slot feed under load (autocannon in a second process, 50 connections, 10 s) on
// the 200 path (render cached) and the 304 path (If-None-Match), against a minimal node:http server holding the
// same bytes and headers in memory, measured in the same run on the same machine. Plus the cold render of
// 5,000 slots: renderFeed alone, and a whole cache-missing request (read from Postgres, render, gzip, hash).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { FeedView } from '../../src/feeds/feed-options.js';
import { renderFeed, type FeedSlot } from '../../src/feeds/render-feed.js';
import { commitSuccessfulSync } from '../../src/store/snapshots.js';
import type { FetchedSlot } from '../../src/store/slot-diff.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { check, type BenchSection } from './bench-result.js';
import { runLoad, type LoadResult } from './load-generator.js';
import { round } from './process-stats.js';

const EVENT_IDS = ['evt_intro', 'evt_deep', 'evt_hours'];
const TARGET_200 = 0.5;
const TARGET_304 = 0.8;

function slotsFrom(startIso: string, count: number): FetchedSlot[] {
  const base = Date.parse(startIso);
  return Array.from({ length: count }, (_, n) => {
    const startsAt = new Date(base + Math.floor(n / EVENT_IDS.length) * 30 * 60_000);
    return {
      eventId: EVENT_IDS[n % EVENT_IDS.length] ?? '',
      startsAt,
      endsAt: new Date(startsAt.getTime() + 1_800_000),
    };
  });
}

/** A connection whose snapshot holds `count` open slots, and a feed of it; returns the feed's path. */
export async function feedWithSlots(
  h: Pick<WebHarness, 'sync' | 'feeds'>,
  count: number,
): Promise<{ path: string; connectionId: string; feedId: string }> {
  const prisma = h.sync.db.prisma;
  const now = h.sync.clock.now();
  const connection = await prisma.connection.create({
    data: { upstreamUserId: `bench-${randomUUID()}`, email: 'ada@example.test', timezone: 'Europe/Berlin' },
  });
  await commitSuccessfulSync(prisma, {
    connectionId: connection.id,
    snapshot: {
      profile: {
        payload: { name: 'Ada' },
        email: 'ada@example.test',
        name: 'Ada Lovelace',
        timezone: 'Europe/Berlin',
      },
      eventTypes: EVENT_IDS.map((id, i) => ({
        upstreamEventId: id,
        title: ['Intro call', 'Deep dive', 'Office hours'][i] ?? id,
        durationMinutes: 30,
        enabled: true,
        secret: false,
        url: `https://book.calendbook.test/ada/${id}`,
        color: '#1e90ff',
        payload: { event_id: id },
      })),
      overviews: [],
      slots: slotsFrom(new Date(now.getTime() + 3_600_000).toISOString(), count),
    },
    run: { id: randomUUID(), jobId: null, attempt: 1, startedAt: now, callsByEndpoint: {} },
    now,
    next: now,
  });
  // The slots view: one event per slot, so the load figures compare with those measured before views existed.
  const { token, feed } = await h.feeds.create({ connectionId: connection.id, options: { view: 'slots' } });
  return { path: `/feeds/${token}.ics`, connectionId: connection.id, feedId: feed.id };
}

/**
 * Load on slotfeed's 200 path and its 304 path (If-None-Match) at `url`, then on a baseline sending the same
 * bytes and headers from memory; each run checked to have answered only as expected.
 */
export async function loadBesideBaseline(options: {
  url: string;
  first: { body: Buffer; headers: http.IncomingHttpHeaders };
  revalidate: Record<string, string>;
  connections: number;
  seconds: number;
}): Promise<Record<'slotfeed200' | 'slotfeed304' | 'baseline200' | 'baseline304', LoadResult>> {
  const { url, first, revalidate, connections, seconds } = options;
  const load = (target: string, headers?: Record<string, string>) =>
    runLoad({ url: target, connections, seconds, ...(headers ? { headers } : {}) });
  const slotfeed200 = await load(url);
  const slotfeed304 = await load(url, revalidate);
  const baseline = await startBaseline(first.body, first.headers);
  let baseline200: LoadResult;
  let baseline304: LoadResult;
  try {
    baseline200 = await load(baseline.url);
    baseline304 = await load(baseline.url, revalidate);
  } finally {
    await baseline.close();
  }
  const runs = { slotfeed200, slotfeed304, baseline200, baseline304 };
  for (const [name, r] of Object.entries(runs)) {
    const status = name.slice(-3);
    const other = Object.entries(r.statuses).filter(([s]) => s !== status);
    check(
      r.errors === 0 && other.length === 0,
      `${name}: errors ${r.errors}, other statuses ${JSON.stringify(other)}`,
    );
  }
  return runs;
}

/** The same bytes and headers as slotfeed's answer, from memory: the floor of what serving a feed costs. */
export async function startBaseline(
  body: Buffer,
  headers: http.IncomingHttpHeaders,
): Promise<{ url: string; close(): Promise<void> }> {
  const etag = String(headers.etag);
  // Every header slotfeed sent, but those node:http writes itself.
  const own = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'content-length']);
  const sent = Object.fromEntries(
    Object.entries(headers).filter(([name, value]) => !own.has(name) && typeof value === 'string'),
  ) as Record<string, string>;
  const { 'content-type': _type, 'content-disposition': _disposition, ...common } = sent;
  const server = http.createServer((request, response) => {
    if (request.headers['if-none-match'] === etag) {
      response.writeHead(304, common).end();
      return;
    }
    response.writeHead(200, { ...sent, 'content-length': body.length });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/feed.ics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

function coldRenderMs(slotCount: number, runs: number, view: FeedView): number {
  const now = new Date('2026-03-02T09:00:00Z');
  // Every fifth start is booked (all event types gone there), so the free view has ~1,000 blocks to merge
  // and describe rather than one.
  const perStart = EVENT_IDS.length;
  const slots: FeedSlot[] = slotsFrom('2026-03-02T10:00:00Z', Math.ceil((slotCount * 5) / 4) + perStart)
    .filter((_, n) => Math.floor(n / perStart) % 5 !== 4)
    .slice(0, slotCount)
    .map((s) => ({
      ...s,
      sequence: 0,
      firstSeenAt: now,
      lastChangedAt: now,
    }));
  const eventTypes = new Map(
    EVENT_IDS.map((id) => [
      id,
      {
        title: `Event ${id}`,
        durationMinutes: 30,
        url: `https://book.test/${id}`,
        color: '#1e90ff',
        enabled: true,
        secret: false,
      },
    ]),
  );
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    renderFeed({
      connectionId: randomUUID(),
      calendarName: 'Ada Lovelace — free time',
      description: 'Free slots',
      refreshIntervalSeconds: 900,
      eventTypes,
      slots,
      view,
      merge: false,
      maxEvents: slotCount,
    });
    times.push(performance.now() - started);
  }
  return median(times);
}

export const loadFigures = (r: LoadResult) => ({
  requestsPerSecond: round(r.requestsPerSecond, 0),
  p99Ms: r.p99Ms,
});

export async function benchFeedServing(
  options: { connections?: number; seconds?: number } = {},
): Promise<BenchSection[]> {
  const connections = options.connections ?? 50;
  const seconds = options.seconds ?? 10;
  // Request lines are logged at info as in production, into a sink that drops them.
  const sink: string[] = [];
  sink.push = () => 0;
  // The load generator is one address making thousands of requests a second: no per-address feed limit.
  const h = await createWebHarness('bench_feeds', {
    webEnv: { FEED_MAX_EVENTS: '5000', FEED_RATE_LIMIT_PER_MINUTE: '0' },
    logLines: sink,
  });
  try {
    const feed = await feedWithSlots(h, 1000);
    const first = await h.get(feed.path);
    check(first.status === 200, `feed answered ${first.status}`);
    const vevents = first.text.split('BEGIN:VEVENT').length - 1;
    check(vevents === 1000, `feed has ${vevents} events, expected 1000`);
    const etag = String(first.headers.etag);
    const revalidate = { 'if-none-match': etag };
    check((await h.get(feed.path, revalidate)).status === 304, 'If-None-Match did not answer 304');

    const { slotfeed200, slotfeed304, baseline200, baseline304 } = await loadBesideBaseline({
      url: `${h.url}${feed.path}`,
      first,
      revalidate,
      connections,
      seconds,
    });

    // A cache miss of a 5,000-slot feed: each request after the feed version moved.
    const big = await feedWithSlots(h, 5000);
    const missMs: number[] = [];
    for (let i = 0; i < 5; i++) {
      await h.sync.db.prisma.connection.update({
        where: { id: big.connectionId },
        data: { feedVersion: { increment: 1 } },
      });
      const started = performance.now();
      const response = await h.get(big.path);
      missMs.push(performance.now() - started);
      check(response.status === 200, `5,000-slot feed answered ${response.status}`);
    }

    const ratio200 = slotfeed200.requestsPerSecond / baseline200.requestsPerSecond;
    const ratio304 = slotfeed304.requestsPerSecond / baseline304.requestsPerSecond;
    const inputs = {
      slots: 1000,
      bodyBytes: first.body.length,
      loadConnections: connections,
      loadSeconds: seconds,
      loadGenerator: 'autocannon, second process',
      requestLogging: 'info (dropped)',
    };
    return [
      {
        benchmark: 'feed serving, 200 (render cached)',
        inputs,
        figures: {
          ...loadFigures(slotfeed200),
          baselineRequestsPerSecond: round(baseline200.requestsPerSecond, 0),
          baselineP99Ms: baseline200.p99Ms,
          ratioToBaseline: round(ratio200, 2),
        },
        targets: { ratioToBaseline: { target: `≥ ${TARGET_200}`, met: ratio200 >= TARGET_200 } },
      },
      {
        benchmark: 'feed serving, 304 (If-None-Match)',
        inputs,
        figures: {
          ...loadFigures(slotfeed304),
          baselineRequestsPerSecond: round(baseline304.requestsPerSecond, 0),
          baselineP99Ms: baseline304.p99Ms,
          ratioToBaseline: round(ratio304, 2),
        },
        targets: { ratioToBaseline: { target: `≥ ${TARGET_304}`, met: ratio304 >= TARGET_304 } },
      },
      {
        benchmark: 'cold feed render, 5,000 slots',
        inputs: { slots: 5000, runs: 5, eventTypes: EVENT_IDS.length },
        figures: {
          renderFreeViewMsMedian: round(coldRenderMs(5000, 5, 'free'), 1),
          renderSlotsViewMsMedian: round(coldRenderMs(5000, 5, 'slots'), 1),
          cacheMissRequestMsMedian: round(median(missMs), 1),
        },
      },
    ];
  } finally {
    await h.close();
  }
}
