// `npm run bench`: runs the benchmarks, prints one table and writes bench-results.json (git-ignored) with every
// figure, its inputs, the machine's CPU count and the Node version. Never part of `npm test`.
//   BENCH_ONLY=sync|commit|feeds|share|teams|webhooks|growth|partitions|reports|reports-packed|freshness|
//     freshness-real|freshness-week|demo-start|frontier|tick
//     (comma-separated; default: all but demo-start, which clones the checkout and runs npm ci, so runs only
//     when named). A run of some keeps the others' last figures in the file.
//   BENCH_DEMO_SCRIPT: demo-start runs this as the clone's "demo" script instead of the committed one;
//     BENCH_KEEP=1: it leaves its temporary clone in place (the path is printed).
//   BENCH_CONNECTIONS (default 1000), BENCH_RATE_LIMIT (default 200): the sync round's size and upstream limit.
//   BENCH_FRESHNESS_CONNECTIONS (10000), BENCH_FRESHNESS_BUDGET (600 calls/s), BENCH_FRESHNESS_SHORT_BUDGET
//     (120): the counted run's size and budgets. BENCH_FRESHNESS_FRONTIER: the band configurations both
//     freshness runs measure, `<SYNC_BANDS>@<SYNC_ADAPT_FACTORS>@<SYNC_ACCOUNT_INTERVAL>` separated by `;`
//     (the last two may be left out for their defaults; default FRONTIER below; the fixed reference and the
//     configuration's defaults are always in it), BENCH_FRESHNESS_REAL_FRONTIER the real-sync run's (default:
//     the fixed reference, the bands before issue 30, and today's defaults). BENCH_FRESHNESS_BANDS / _ADAPT /
//     _ACCOUNT: the configuration held to the issue's targets (default: the settings' defaults). Both runs
//     write bench-frontier.md and bench-frontier.svg (the frontier table and plot) beside bench-results.json;
//     BENCH_ONLY=frontier runs nothing and writes them again from the figures kept there.
//   BENCH_FRESHNESS_WEEK_CONNECTIONS (500), BENCH_FRESHNESS_WEEK_BUDGET (35 calls/s): freshness-week's size,
//     the counted run over a whole simulated week with realistic weekly hours (issue 38), the configuration
//     held to the targets counted in bookable days and in calendar days, beside the fixed schedule; p50 / p95 by
//     weekday for the first two bookable days, and for the days of each of its bands (issue 41).
//   redis-shards (issue 42) runs only when named: Redis commands per sync by hash tag, REDIS_SHARDS=8, on a
//     redis-server of its own, BENCH_SHARDS_CONNECTIONS (200) connections.
//   caldav-push and caldav-hosts (issue 35) run only when named: caldav-push needs radicale and xandikos,
//     sized by BENCH_CONNECTIONS; caldav-hosts by BENCH_CALDAV_HOSTS_DESTINATIONS (1000) and BENCH_CALDAV_HOSTS (20).
//   caldav-connections (issue 43) runs only when named: CPU per CalDAV request over https with a new connection
//     each and with kept connections (needs openssl), BENCH_CALDAV_CONNECTION_REQUESTS (500) a run.
//   push-resources (issue 43) runs only when named: CPU of a push's event resources for a change of one event, the
//     whole feed rendered and cut against the resources kept, for feeds of BENCH_PUSH_RESOURCES_SIZES events.
//   request-limits (issue 43) runs only when named: CPU per request through the CalDAV and upstream doors, and the
//     CPU idle afterwards while their time limits come due, BENCH_REQUEST_LIMITS_REQUESTS (2000) a round.
//   unit-costs (issue 42): the unit costs of a sync, a CalDAV push, a webhook delivery and the web's answers, on the
//     production build with a redis-server of its own (needs radicale), BENCH_UNIT_COSTS_CONNECTIONS (60) synced
//     for BENCH_UNIT_COSTS_SECONDS (180). Every run that has the unit costs (this one's or kept) prints the capacity
//     model's table for 10,000 / 100,000 / 1,000,000 connections and writes it to bench-scaling.md (pasted into
//     docs/scaling.md); BENCH_ONLY=scaling runs nothing and writes it again from the figures kept.
//   tick (issue 42) runs only when named: the scheduler's tick over 10,000, 100,000 and 1,000,000 generated
//     connections (BENCH_TICK_SIZES, comma-separated) with BENCH_TICK_DUE (2000) due, and at the largest size
//     with BENCH_TICK_DUE_AT_LARGEST (1000,10000,50000) due; BENCH_TICK_TICKS (5) ticks timed per point; then
//     the query with BENCH_TICK_DEAD_ENTRIES (100000) syncs' dead index entries, and after a VACUUM.
//   worker-rss (issue 42, 4) runs only when named: one worker process's memory over BENCH_WORKER_RSS_CONNECTIONS
//     (100000) small connections, read at 1k, 10k, 25k, 50k and the last; and Redis memory per connection.
//     BENCH_WORKER_RSS_MINUTES (240): syncing time allowed; a run out of time reads the last sample where it got.
//   growth: BENCH_GROWTH_SCHEDULES (hourly,bands) which schedules to run; the bands run's size
//     BENCH_GROWTH_BANDS_CONNECTIONS (2) × BENCH_GROWTH_BANDS_DAYS (2): a longer run narrows its upper bound.
//   reports-year (issue 43) runs only when named: every report over a year of BENCH_YEAR_CONNECTIONS (10000)
//     connections' history generated packed, as retention keeps it (today's runs up to its instant row by row),
//     at the default bands' BENCH_YEAR_SLOTS (237)
//     slots and BENCH_YEAR_RUNS (432) runs a connection-day, drawn from BENCH_YEAR_POOL (64) generated days; a
//     report is cancelled after BENCH_YEAR_TIMEOUT (120) seconds. Target: 2 s each. Stored report days: the
//     retention run stores BENCH_YEAR_STORE_SAMPLE (20) connections' (timed), the rest copy theirs.
//     BENCH_YEAR_REPORTS (e.g. utilization,bookings) times only those reports. Last, the retention run a day on
//     (every connection's next day stored, in batches) is timed. BENCH_YEAR_KEEP=1 keeps the database and prints
//     its URL, to profile a report on it (rename it: the tests drop `slotfeed_test_` databases six hours old).
//   report-days-pass (issue 43) runs only when named: the retention run's pass over report days at
//     BENCH_REPORT_DAYS_CONNECTIONS (10000, in four zones): the first run, one with no day over, one with a quarter's.
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
import { FIXED, benchFreshness, scheduleOf, type Schedule } from './freshness.js';
import { frontierPoints, frontierSvg, frontierTable } from './frontier.js';
import { benchRealFreshness } from './freshness-real.js';
import { benchFreshnessWeek } from './freshness-week.js';
import { benchGrowth } from './growth.js';
import { loadAverage } from './process-stats.js';
import { benchReports } from './reports.js';
import { benchReportsYear } from './reports-year.js';
import { benchReportDaysPass } from './report-days-pass.js';
import { benchPushResources } from './push-resources.js';
import { benchRequestLimits } from './request-limits.js';
import type { ReportName } from '../../src/reports/report-query.js';
import { benchRetentionStrategies } from './retention-strategies.js';
import { benchSharePage } from './share-page.js';
import { benchSyncRound } from './sync-round.js';
import { benchTeamFeeds } from './team-feeds.js';
import { capacityMarkdown, unitCostsOf } from './capacity-table.js';
import { benchUnitCosts } from './unit-costs.js';
import { benchTick } from './tick.js';
import { benchWebhooks } from './webhooks.js';
import { benchWorkerRss } from './worker-rss.js';

const RESULTS = 'bench-results.json';
const FRONTIER_TABLE = 'bench-frontier.md';
const FRONTIER_PLOT = 'bench-frontier.svg';
const SCALING_TABLE = 'bench-scaling.md';
const quick = process.env.BENCH_QUICK === '1';
const only = new Set(
  (
    process.env.BENCH_ONLY ||
    'sync,commit,feeds,share,teams,webhooks,growth,partitions,reports,reports-packed,freshness,freshness-real,' +
      'freshness-week,unit-costs'
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

// Held to the targets: the configuration's defaults, unless the environment says otherwise.
const bandsSchedule: Schedule = scheduleOf(
  process.env.BENCH_FRESHNESS_BANDS ?? variables.SYNC_BANDS.default!,
  variables.SYNC_ADAPT_FACTORS.schema.parse(
    process.env.BENCH_FRESHNESS_ADAPT ?? variables.SYNC_ADAPT_FACTORS.default!,
  ),
  variables.SYNC_ACCOUNT_INTERVAL.schema.parse(
    process.env.BENCH_FRESHNESS_ACCOUNT ?? variables.SYNC_ACCOUNT_INTERVAL.default!,
  ),
);
/** The defaults before issue 30 spent the bands' saving on nothing: the frontier's second reference. */
const BEFORE = '4d=10m,7d=40m,*=3h@0.5,1.5';
/** The configurations the frontier measures besides those two and the defaults. */
const FRONTIER = [
  BEFORE,
  '2d=5m,4d=10m,7d=40m,*=3h@0.5,1.5',
  '2d=3m,4d=10m,7d=40m,*=3h@0.5,1.5',
  '2d=3m,4d=8m,7d=30m,*=2h@0.5,1.5',
  '2d=4m,4d=12m,7d=40m,*=3h@1,1',
  '2d=4m,4d=10m,7d=30m,*=2h@1,1',
  '2d=4m,5d=10m,*=2h@1,1',
  '2d=3m,4d=10m,7d=30m,*=2h@1,1',
].join(';');

/** `<SYNC_BANDS>@<SYNC_ADAPT_FACTORS>@<SYNC_ACCOUNT_INTERVAL>;…` as configurations, checked by the settings' parsers. */
function frontierOf(text: string): Schedule[] {
  const listed = text
    .split(';')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const [
        bands,
        adapt = variables.SYNC_ADAPT_FACTORS.default!,
        account = variables.SYNC_ACCOUNT_INTERVAL.default!,
      ] = entry.split('@');
      variables.SYNC_BANDS.schema.parse(bands);
      return scheduleOf(
        bands!,
        variables.SYNC_ADAPT_FACTORS.schema.parse(adapt),
        variables.SYNC_ACCOUNT_INTERVAL.schema.parse(account),
      );
    });
  const all = [FIXED, ...listed, bandsSchedule];
  return all.filter((s, i) => all.findIndex((t) => t.name === s.name) === i);
}
const frontier = frontierOf(process.env.BENCH_FRESHNESS_FRONTIER ?? FRONTIER);
const realFrontier = frontierOf(process.env.BENCH_FRESHNESS_REAL_FRONTIER ?? BEFORE);

/** `1000,10000` as numbers. */
function listOf(text: string): number[] {
  return text.split(',').map((entry) => Number(entry.trim()));
}

const benches: [string, () => Promise<BenchSection[]>][] = [
  ['sync', () => benchSyncRound({ connections, rateLimitPerSecond })],
  ['commit', () => benchCommitCost()],
  ['feeds', () => benchFeedServing({ seconds: quick ? 2 : 10 })],
  ['share', () => benchSharePage({ seconds: quick ? 2 : 10 })],
  ['teams', () => benchTeamFeeds({ seconds: quick ? 2 : 5 })],
  ['webhooks', () => benchWebhooks({ connections: quick ? 100 : 1000 })],
  ['caldav-push', async () => (await import('./caldav-push.js')).benchCaldavPush(connections)],
  ['caldav-connections', async () => (await import('./caldav-connections.js')).benchCaldavConnections()],
  [
    'redis-shards',
    async () =>
      (await import('./redis-shards.js')).benchRedisShards(
        Number(process.env.BENCH_SHARDS_CONNECTIONS ?? (quick ? 20 : 200)),
        rateLimitPerSecond,
      ),
  ],
  [
    'caldav-hosts',
    async () =>
      (await import('./caldav-hosts.js')).benchCaldavHosts(
        Number(process.env.BENCH_CALDAV_HOSTS_DESTINATIONS ?? (quick ? 100 : 1000)),
        Number(process.env.BENCH_CALDAV_HOSTS ?? 20),
      ),
  ],
  [
    'growth',
    async () => {
      const schedules = (process.env.BENCH_GROWTH_SCHEDULES ?? 'hourly,bands').split(',');
      return [
        ...(schedules.includes('hourly')
          ? await benchGrowth({ schedule: 'hourly', days: quick ? 1 : 3 })
          : []),
        // 18 runs a connection-hour: fewer connections and days keep it to a few minutes.
        ...(schedules.includes('bands')
          ? await benchGrowth({
              schedule: 'default bands',
              connections: Number(process.env.BENCH_GROWTH_BANDS_CONNECTIONS ?? (quick ? 1 : 2)),
              days: Number(process.env.BENCH_GROWTH_BANDS_DAYS ?? (quick ? 1 : 2)),
            })
          : []),
      ];
    },
  ],
  [
    'unit-costs',
    () =>
      benchUnitCosts(bandsSchedule, {
        connections: Number(process.env.BENCH_UNIT_COSTS_CONNECTIONS ?? (quick ? 20 : 60)),
        measureSeconds: Number(process.env.BENCH_UNIT_COSTS_SECONDS ?? (quick ? 30 : 180)),
        ...(quick
          ? { destinations: 20, webhooks: 20, requests: 200, scheduleConnections: 200, growthConnections: 2 }
          : {}),
      }),
  ],
  ['partitions', () => benchRetentionStrategies({ connections: quick ? 100 : 1000, days: quick ? 35 : 120 })],
  ['reports', () => benchReports()],
  ['reports-packed', () => benchReports({ packed: true })],
  [
    'reports-year',
    () =>
      benchReportsYear({
        connections: Number(process.env.BENCH_YEAR_CONNECTIONS ?? (quick ? 100 : 10_000)),
        slotsPerDay: Number(process.env.BENCH_YEAR_SLOTS ?? 237),
        runsPerDay: Number(process.env.BENCH_YEAR_RUNS ?? 432),
        pool: Number(process.env.BENCH_YEAR_POOL ?? 64),
        timeoutSeconds: Number(process.env.BENCH_YEAR_TIMEOUT ?? 120),
        storeSample: Number(process.env.BENCH_YEAR_STORE_SAMPLE ?? 20),
        ...(process.env.BENCH_YEAR_REPORTS
          ? { reports: process.env.BENCH_YEAR_REPORTS.split(',') as ReportName[] }
          : {}),
      }),
  ],
  [
    'report-days-pass',
    () =>
      benchReportDaysPass({
        connections: Number(process.env.BENCH_REPORT_DAYS_CONNECTIONS ?? (quick ? 1000 : 10_000)),
      }),
  ],
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
        frontier,
        bandsSchedule,
      ),
  ],
  [
    'freshness-week',
    () =>
      benchFreshnessWeek(
        {
          connections: Number(process.env.BENCH_FRESHNESS_WEEK_CONNECTIONS ?? (quick ? 100 : 500)),
          // Ample for the fixed schedule (~31 calls/s at 500 connections), as the counted run's 600 at 10,000.
          budgetPerSecond: Number(process.env.BENCH_FRESHNESS_WEEK_BUDGET ?? (quick ? 7 : 35)),
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
        realFrontier,
        bandsSchedule,
      ),
  ],
  [
    'tick',
    () =>
      benchTick({
        sizes: listOf(process.env.BENCH_TICK_SIZES ?? (quick ? '1000,10000' : '10000,100000,1000000')),
        due: Number(process.env.BENCH_TICK_DUE ?? (quick ? 200 : 2000)),
        dueAtLargest: listOf(
          process.env.BENCH_TICK_DUE_AT_LARGEST ?? (quick ? '100,1000' : '1000,10000,50000'),
        ),
        deadEntries: Number(process.env.BENCH_TICK_DEAD_ENTRIES ?? (quick ? 1000 : 100_000)),
        ticks: Number(process.env.BENCH_TICK_TICKS ?? 5),
      }),
  ],
  [
    'worker-rss',
    () =>
      benchWorkerRss({
        connections: Number(process.env.BENCH_WORKER_RSS_CONNECTIONS ?? (quick ? 2000 : 100_000)),
        checkpoints: [1000, 10_000, 25_000, 50_000],
        budgetMinutes: Number(process.env.BENCH_WORKER_RSS_MINUTES ?? 240),
      }),
  ],
  [
    'push-resources',
    () =>
      benchPushResources({
        sizes: listOf(process.env.BENCH_PUSH_RESOURCES_SIZES ?? '3,50,150,300'),
        changes: quick ? 20 : 200,
      }),
  ],
  [
    'request-limits',
    () =>
      benchRequestLimits({
        requests: Number(process.env.BENCH_REQUEST_LIMITS_REQUESTS ?? 2000),
        rounds: quick ? 1 : 3,
      }),
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

// The freshness frontier, from this run's figures and those kept from the last run of the other freshness part.
const points = frontierPoints(results.sections);
if (ran.has('freshness') || ran.has('freshness-real') || only.has('frontier')) {
  const table = frontierTable(points);
  console.log(`\nfreshness frontier (staleness in minutes)\n${table}`);
  writeFileSync(FRONTIER_TABLE, `${table}\n`);
  writeFileSync(
    FRONTIER_PLOT,
    frontierSvg(points, 'slotfeed freshness: p95 staleness by report band vs upstream calls'),
  );
  console.log(`wrote ${FRONTIER_TABLE} and ${FRONTIER_PLOT}`);
}
// The capacity model (docs/scaling.md) from the unit costs of this run or the last that measured them.
if (ran.has('unit-costs') || only.has('scaling')) {
  const markdown = capacityMarkdown(unitCostsOf(results.sections), results.sections);
  console.log(`\ncapacity model (docs/scaling.md)\n${markdown}`);
  writeFileSync(SCALING_TABLE, markdown);
  console.log(`wrote ${SCALING_TABLE}`);
}
process.exit(0);
