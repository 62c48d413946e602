// `npm run bench`: runs the benchmarks, prints one table and writes bench-results.json (git-ignored) with every
// figure, its inputs, the machine's CPU count and the Node version. Never part of `npm test`.
//   BENCH_ONLY=sync|commit|feeds|teams|webhooks|growth|partitions|reports|freshness|freshness-real|demo-start
//     (comma-separated; default: all but demo-start, which clones the checkout and runs npm ci, so runs only
//     when named). A run of some keeps the others' last figures in the file.
//   BENCH_DEMO_SCRIPT: demo-start runs this as the clone's "demo" script instead of the committed one;
//     BENCH_KEEP=1: it leaves its temporary clone in place (the path is printed).
//   BENCH_CONNECTIONS (default 1000), BENCH_RATE_LIMIT (default 200): the sync round's size and upstream limit.
//   BENCH_FRESHNESS_CONNECTIONS (10000), BENCH_FRESHNESS_BUDGET (600 calls/s), BENCH_FRESHNESS_SHORT_BUDGET
//     (120), BENCH_FRESHNESS_BANDS / _ADAPT: fixed versus bands; the bands' default is SYNC_BANDS's.
//   BENCH_QUICK=1: reduced sizes to try the benchmarks out (100 connections, 2 s loads, 1 day of growth); the
//     docs/performance.md quotes full-size runs only.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { variables } from '../../src/config.js';
import type { BenchSection } from './bench-result.js';
import { benchCommitCost } from './commit-cost.js';
import { benchDemoStart } from './demo-start.js';
import { benchFeedServing } from './feed-serving.js';
import { benchFreshness, type Schedule } from './freshness.js';
import { benchRealFreshness } from './freshness-real.js';
import { benchGrowth } from './growth.js';
import { loadAverage } from './process-stats.js';
import { benchReports } from './reports.js';
import { benchRetentionStrategies } from './retention-strategies.js';
import { benchSyncRound } from './sync-round.js';
import { benchTeamFeeds } from './team-feeds.js';
import { benchWebhooks } from './webhooks.js';

const RESULTS = 'bench-results.json';
const quick = process.env.BENCH_QUICK === '1';
const only = new Set(
  (
    process.env.BENCH_ONLY ||
    'sync,commit,feeds,teams,webhooks,growth,partitions,reports,freshness,freshness-real'
  )
    .split(',')
    .map((name) => name.trim()),
);
// The name this switch had before the other benchmarks joined it.
if (only.has('sync-round')) only.add('sync');
const connections = Number(process.env.BENCH_CONNECTIONS ?? (quick ? 100 : 1000));
const rateLimitPerSecond = Number(process.env.BENCH_RATE_LIMIT ?? 200);

const machine = {
  cpus: os.cpus().length,
  cpuModel: os.cpus()[0]?.model ?? 'unknown',
  node: process.version,
  memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  loadAverage1mAtStart: loadAverage(),
};
console.log(
  `slotfeed bench — ${machine.cpus} CPUs (${machine.cpuModel}), Node ${machine.node}, ` +
    `1-minute load ${machine.loadAverage1mAtStart}${quick ? ', QUICK sizes' : ''}`,
);

// Fixed versus this: the configuration's defaults, unless the environment says otherwise.
const bandsSchedule: Schedule = {
  name: 'bands',
  bands: process.env.BENCH_FRESHNESS_BANDS ?? variables.SYNC_BANDS.default!,
  adapt: variables.SYNC_ADAPT_FACTORS.schema.parse(
    process.env.BENCH_FRESHNESS_ADAPT ?? variables.SYNC_ADAPT_FACTORS.default!,
  ),
};

const benches: [string, () => Promise<BenchSection[]>][] = [
  ['sync', () => benchSyncRound({ connections, rateLimitPerSecond })],
  ['commit', () => benchCommitCost()],
  ['feeds', () => benchFeedServing({ seconds: quick ? 2 : 10 })],
  ['teams', () => benchTeamFeeds({ seconds: quick ? 2 : 5 })],
  ['webhooks', () => benchWebhooks({ connections: quick ? 100 : 1000 })],
  ['growth', () => benchGrowth({ days: quick ? 1 : 3 })],
  ['partitions', () => benchRetentionStrategies({ connections: quick ? 100 : 1000, days: quick ? 35 : 120 })],
  ['reports', () => benchReports()],
  [
    'freshness',
    () =>
      benchFreshness(
        {
          connections: Number(process.env.BENCH_FRESHNESS_CONNECTIONS ?? (quick ? 1000 : 10_000)),
          // Ample for the fixed schedule (it needs ~580 calls/s at 10,000), then short for both.
          budgetPerSecond: Number(process.env.BENCH_FRESHNESS_BUDGET ?? (quick ? 60 : 600)),
          shortBudgetPerSecond: Number(process.env.BENCH_FRESHNESS_SHORT_BUDGET ?? (quick ? 12 : 120)),
          warmupHours: 6,
          measureHours: quick ? 6 : 24,
          bookingsPerDay: 2,
        },
        bandsSchedule,
      ),
  ],
  [
    'freshness-real',
    () =>
      benchRealFreshness(
        {
          connections: Number(process.env.BENCH_FRESHNESS_REAL_CONNECTIONS ?? (quick ? 20 : 100)),
          warmupHours: quick ? 1 : 3,
          measureHours: quick ? 1 : 6,
          // Busier than the 10,000-connection run, so a hundred accounts make enough changes to measure.
          bookingsPerDay: 4,
        },
        bandsSchedule,
      ),
  ],
  [
    'demo-start',
    () =>
      benchDemoStart({
        source: fileURLToPath(new URL('../..', import.meta.url)),
        demoScript: process.env.BENCH_DEMO_SCRIPT || undefined,
        keep: process.env.BENCH_KEEP === '1',
      }),
  ],
];
const sections: (BenchSection & { bench: string })[] = [];
for (const [name, bench] of benches) {
  if (!only.has(name)) continue;
  const started = performance.now();
  sections.push(...(await bench()).map((section) => ({ bench: name, ...section })));
  console.log(`${name}: ${Math.round((performance.now() - started) / 1000)} s`);
}

console.table(
  sections.flatMap((s) => [
    ...Object.entries(s.figures).map(([measure, value]) => ({ benchmark: s.benchmark, measure, value })),
    ...Object.entries(s.targets ?? {}).map(([measure, t]) => ({
      benchmark: s.benchmark,
      measure: `target: ${measure}`,
      value: `${t.target}: ${t.met ? 'met' : 'MISSED'}`,
    })),
  ]),
);

type Results = { sections?: (BenchSection & { bench?: string })[] };
const previous: Results = existsSync(RESULTS) ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as Results) : {};
const ran = new Set(sections.map((s) => s.bench));
const kept = (previous.sections ?? []).filter((s) => s.bench !== undefined && !ran.has(s.bench));
// Each section carries the run it came from: sections kept from an earlier run keep that run's machine state.
const run = {
  measuredAt: new Date().toISOString(),
  machine: { ...machine, loadAverage1mAtEnd: loadAverage() },
  quick,
};
const results = {
  ...run,
  sections: [...kept, ...sections.map((s) => ({ ...s, run }))],
};
writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
console.log(`wrote ${RESULTS}`);
process.exit(0);
