// Benchmark: a share page (issue 37) under load (autocannon in a second process, 50 connections, 10 s) on the
// 200 path (render kept) and the 304 path (If-None-Match), against a minimal node:http server sending the same
// bytes and headers from memory, measured in the same run. The feed is the feed benchmark's 1,000-slot one, in
// the free view a share page shows: its week in the owner's zone. Every request of slotfeed's reads the link from
// Postgres (so a revocation holds at once); the render and the feed's lookup are kept in memory.
import { createWebHarness } from '../support/web-harness.js';
import { check, type BenchSection } from './bench-result.js';
import { feedWithSlots, loadBesideBaseline, loadFigures } from './feed-serving.js';
import type { LoadResult } from './load-generator.js';
import { round } from './process-stats.js';

export async function benchSharePage(
  options: { connections?: number; seconds?: number } = {},
): Promise<BenchSection[]> {
  const connections = options.connections ?? 50;
  const seconds = options.seconds ?? 10;
  const sink: string[] = [];
  sink.push = () => 0;
  const h = await createWebHarness('bench_share', {
    webEnv: { FEED_RATE_LIMIT_PER_MINUTE: '0' },
    logLines: sink,
  });
  try {
    const feed = await feedWithSlots(h, 1000);
    await h.sync.db.prisma.feed.update({ where: { id: feed.feedId }, data: { options: {} } });
    const { secret } = await h.deps.shareLinks.create({
      feedId: feed.feedId,
      label: 'bench',
      expiresAt: null,
      now: h.sync.clock.now(),
    });
    const path = `/share/${secret}?week=0&zone=Europe%2FBerlin`;
    const first = await h.get(path);
    check(first.status === 200, `share page answered ${first.status}`);
    const blocks = first.text.split('class="share-block"').length - 1;
    check(blocks > 0, 'the share page shows no free block');
    const revalidate = { 'if-none-match': String(first.headers.etag) };
    check((await h.get(path, revalidate)).status === 304, 'If-None-Match did not answer 304');

    const { slotfeed200, slotfeed304, baseline200, baseline304 } = await loadBesideBaseline({
      url: `${h.url}${path}`,
      first,
      revalidate,
      connections,
      seconds,
    });
    const inputs = {
      slots: 1000,
      blocksShown: blocks,
      bodyBytes: first.body.length,
      loadConnections: connections,
      loadSeconds: seconds,
      loadGenerator: 'autocannon, second process',
      requestLogging: 'info (dropped)',
    };
    const section = (benchmark: string, r: LoadResult, base: LoadResult): BenchSection => ({
      benchmark,
      inputs,
      figures: {
        ...loadFigures(r),
        baselineRequestsPerSecond: round(base.requestsPerSecond, 0),
        baselineP99Ms: base.p99Ms,
        ratioToBaseline: round(r.requestsPerSecond / base.requestsPerSecond, 2),
      },
    });
    return [
      section('share page, 200 (render kept)', slotfeed200, baseline200),
      section('share page, 304 (If-None-Match)', slotfeed304, baseline304),
    ];
  } finally {
    await h.close();
  }
}
