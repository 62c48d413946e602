// The capacity model (issue 42, docs/scaling.md): measured unit costs × an installation's size → what each
// resource must carry. Pure arithmetic; every figure it multiplies comes from `npm run bench` (capacity-table.ts
// reads them from bench-results.json), every assumption about how people use slotfeed is a named constant here.
// A unit cost not measured stays null and every resource computed from it prints "not measured": nothing is guessed.
import { variables } from '../../src/config.js';

/** The installation sizes the model is printed for, in connections. */
export const SIZES = [10_000, 100_000, 1_000_000] as const;

const DAY_SECONDS = 86_400;

/**
 * How often calendar apps fetch a subscribed feed, per day. None of the three documents it; these are what their
 * users and publishers report (docs/scaling.md, "Assumptions"), and none honours the feed's REFRESH-INTERVAL.
 */
export const FEED_POLLS_PER_DAY = {
  /** Google Calendar fetches a subscribed URL every 8 to 24 hours, no user setting: every 12 hours, the middle. */
  google: 2,
  /** Apple Calendar (macOS) auto-refreshes hourly by default (5 minutes to weekly; iOS follows Fetch): hourly. */
  apple: 24,
  /** Outlook.com and Outlook on the web fetch roughly every 3 hours. */
  outlook: 8,
} as const;

/**
 * Every connection's feed is subscribed once in each of the three (the owner in one, two colleagues or a team
 * calendar in the others): 34 polls per feed a day. A person whose feed nobody subscribes to costs none.
 */
export const FEED_POLLS_PER_CONNECTION_DAY =
  FEED_POLLS_PER_DAY.google + FEED_POLLS_PER_DAY.apple + FEED_POLLS_PER_DAY.outlook;

/**
 * Every poll is answered 200 with a fresh render: the upper bound. A feed's text changes as its slots pass, so a
 * poll hours after the last rarely revalidates to 304, and at a million feeds over several web processes the
 * render cache cannot be counted on.
 */
export const POLLS_ANSWERED_304 = 0;

/** Share pages "opened now and then": twice a connection-day (a link sent with an invitation to book). */
export const SHARE_VIEWS_PER_CONNECTION_DAY = 2;

/** Connections with a CalDAV destination (the tenth), and with a webhook endpoint (as many, assumed). */
export const CALDAV_SHARE = 0.1;
export const WEBHOOK_SHARE = 0.1;

/**
 * Changes of a connection's feed a day, each one push per destination and one delivery per endpoint: two bookings
 * (the freshness benchmark's mean) and the horizon moving on at midnight.
 */
export const FEED_CHANGES_PER_CONNECTION_DAY = 3;

/** UPSTREAM_RATE_LIMIT_PER_SECOND's default: what one installation asks of Calendbook unless raised. */
export const DEFAULT_UPSTREAM_LIMIT_PER_SECOND = Number(variables.UPSTREAM_RATE_LIMIT_PER_SECOND.default);

/** The measured unit costs the model multiplies; null where the bench has not measured it. */
export interface UnitCosts {
  syncsPerConnectionHour: number | null;
  callsPerConnectionHour: number | null;
  /** A sync's costs: a fixed part per sync and a part per upstream call (unit-costs.ts, perSyncAndCall). */
  workerCpuMsPerSyncFixed: number | null;
  workerCpuMsPerCall: number | null;
  schedulerCpuMsPerSync: number | null;
  redisCommandsPerSyncFixed: number | null;
  redisCommandsPerCall: number | null;
  redisCpuMsPerSyncFixed: number | null;
  redisCpuMsPerCall: number | null;
  redisBytesInPerSyncFixed: number | null;
  redisBytesInPerCall: number | null;
  redisBytesOutPerSyncFixed: number | null;
  redisBytesOutPerCall: number | null;
  postgresRowWritesPerSync: number | null;
  workerCpuMsPerPush: number | null;
  redisCommandsPerPush: number | null;
  redisCpuMsPerPush: number | null;
  redisBytesInPerPush: number | null;
  redisBytesOutPerPush: number | null;
  postgresRowWritesPerPush: number | null;
  caldavBytesSentPerPush: number | null;
  workerCpuMsPerDelivery: number | null;
  redisCommandsPerDelivery: number | null;
  redisCpuMsPerDelivery: number | null;
  redisBytesInPerDelivery: number | null;
  redisBytesOutPerDelivery: number | null;
  postgresRowWritesPerDelivery: number | null;
  webhookBytesSentPerDelivery: number | null;
  webCpuMsPerFeed200Rendered: number | null;
  webCpuMsPerFeed304: number | null;
  webCpuMsPerShareView: number | null;
  redisCommandsPerFeed200: number | null;
  redisCommandsPerFeed304: number | null;
  redisCommandsPerShareView: number | null;
  redisCpuMsPerFeed200: number | null;
  redisCpuMsPerShareView: number | null;
  feedBytesGzip: number | null;
  feed304Bytes: number | null;
  shareBytesGzip: number | null;
  /** History rows a connection adds a day (before retention), at the default bands' syncs a day. */
  rowsPerConnectionDay: number | null;
  /** Row writes of the history (slots opened and closed, bookings, new versions) per connection-day. */
  changeRowWritesPerConnectionDay: number | null;
  /** What a connection's history holds after a year with the retention defaults, MiB. */
  mibPerConnectionYearWithRetention: number | null;
  redisMemoryBytesPerConnection: number | null;
  /** One scheduler tick's time with 1,000,000 connection rows (the `tick` bench), ms. */
  tickMsAt1M: number | null;
  /** A worker's RSS after syncing 100,000 connections (the `worker-rss` bench), MiB. */
  workerRssMiBAt100k: number | null;
}

/**
 * A cost per sync and per upstream call from two mixes of syncs (a·syncs + b·calls = cost, solved exactly); a
 * negative share (noise, on a loaded machine) is put to 0 and the rest given to the other.
 */
export function perSyncAndCall<M extends { syncs: number; calls: number }>(
  a: M,
  b: M,
  cost: (m: M) => number,
): { perSync: number; perCall: number } {
  const callsA = a.calls / a.syncs;
  const callsB = b.calls / b.syncs;
  const costA = cost(a) / a.syncs;
  const costB = cost(b) / b.syncs;
  const perCall = callsA === callsB ? 0 : (costA - costB) / (callsA - callsB);
  if (perCall < 0) return { perSync: costB, perCall: 0 };
  const perSync = costB - perCall * callsB;
  if (perSync < 0) return { perSync: 0, perCall: costB / callsB };
  return { perSync, perCall };
}

/** What happens per second at a size: the model's first step, from the assumptions and the schedule alone. */
export function eventRates(
  costs: Pick<UnitCosts, 'syncsPerConnectionHour' | 'callsPerConnectionHour'>,
  connections: number,
) {
  const perDay = (n: number) => (connections * n) / DAY_SECONDS;
  const polls = perDay(FEED_POLLS_PER_CONNECTION_DAY);
  return {
    syncs: times(costs.syncsPerConnectionHour, connections / 3600),
    upstreamCalls: times(costs.callsPerConnectionHour, connections / 3600),
    feedPolls200: polls * (1 - POLLS_ANSWERED_304),
    feedPolls304: polls * POLLS_ANSWERED_304,
    shareViews: perDay(SHARE_VIEWS_PER_CONNECTION_DAY),
    pushes: perDay(CALDAV_SHARE * FEED_CHANGES_PER_CONNECTION_DAY),
    deliveries: perDay(WEBHOOK_SHARE * FEED_CHANGES_PER_CONNECTION_DAY),
  };
}

const times = (a: number | null, b: number | null) => (a === null || b === null ? null : a * b);

/** Σ rate × cost, null when any term with a rate is not measured. */
function sum(...terms: [rate: number | null, cost: number | null][]): number | null {
  let total = 0;
  for (const [rate, cost] of terms) {
    if (rate === 0) continue;
    const term = times(rate, cost);
    if (term === null) return null;
    total += term;
  }
  return total;
}

export interface Resource {
  name: string;
  unit: string;
  /** One value per SIZES entry; null: not measured. */
  values: (number | null)[];
  /** Which unit costs it is made of, for the reader. */
  from: string;
}

export function capacityAt(costs: UnitCosts, connections: number): Record<string, number | null> {
  const r = eventRates(costs, connections);
  const ms = (value: number | null) => (value === null ? null : value / 1000);
  const mb = (value: number | null) => (value === null ? null : value / 1e6);
  const redisCpuMs = sum(
    [r.syncs, costs.redisCpuMsPerSyncFixed],
    [r.upstreamCalls, costs.redisCpuMsPerCall],
    [r.pushes, costs.redisCpuMsPerPush],
    [r.deliveries, costs.redisCpuMsPerDelivery],
    [r.feedPolls200, costs.redisCpuMsPerFeed200],
    [r.shareViews, costs.redisCpuMsPerShareView],
  );
  return {
    ...r,
    workerCores: ms(
      sum(
        [r.syncs, costs.workerCpuMsPerSyncFixed],
        [r.upstreamCalls, costs.workerCpuMsPerCall],
        [r.pushes, costs.workerCpuMsPerPush],
        [r.deliveries, costs.workerCpuMsPerDelivery],
      ),
    ),
    schedulerCores: ms(times(r.syncs, costs.schedulerCpuMsPerSync)),
    webCores: ms(
      sum(
        [r.feedPolls200, costs.webCpuMsPerFeed200Rendered],
        [r.feedPolls304, costs.webCpuMsPerFeed304],
        [r.shareViews, costs.webCpuMsPerShareView],
      ),
    ),
    redisCommands: sum(
      [r.syncs, costs.redisCommandsPerSyncFixed],
      [r.upstreamCalls, costs.redisCommandsPerCall],
      [r.pushes, costs.redisCommandsPerPush],
      [r.deliveries, costs.redisCommandsPerDelivery],
      [r.feedPolls200, costs.redisCommandsPerFeed200],
      [r.feedPolls304, costs.redisCommandsPerFeed304],
      [r.shareViews, costs.redisCommandsPerShareView],
    ),
    redisCores: ms(redisCpuMs),
    redisInMBps: mb(
      sum(
        [r.syncs, costs.redisBytesInPerSyncFixed],
        [r.upstreamCalls, costs.redisBytesInPerCall],
        [r.pushes, costs.redisBytesInPerPush],
        [r.deliveries, costs.redisBytesInPerDelivery],
      ),
    ),
    redisOutMBps: mb(
      sum(
        [r.syncs, costs.redisBytesOutPerSyncFixed],
        [r.upstreamCalls, costs.redisBytesOutPerCall],
        [r.pushes, costs.redisBytesOutPerPush],
        [r.deliveries, costs.redisBytesOutPerDelivery],
      ),
    ),
    redisMemoryGiB: times(costs.redisMemoryBytesPerConnection, connections / 2 ** 30),
    postgresRowWrites: sum(
      [r.syncs, costs.postgresRowWritesPerSync],
      [connections / DAY_SECONDS, costs.changeRowWritesPerConnectionDay],
      [r.pushes, costs.postgresRowWritesPerPush],
      [r.deliveries, costs.postgresRowWritesPerDelivery],
    ),
    postgresRowsPerYearMillions: times(costs.rowsPerConnectionDay, (connections * 365) / 1e6),
    postgresGiBAfterAYear: times(costs.mibPerConnectionYearWithRetention, connections / 1024),
    egressMBps: mb(
      sum(
        [r.feedPolls200, costs.feedBytesGzip],
        [r.feedPolls304, costs.feed304Bytes],
        [r.shareViews, costs.shareBytesGzip],
        [r.pushes, costs.caldavBytesSentPerPush],
        [r.deliveries, costs.webhookBytesSentPerDelivery],
      ),
    ),
    upstreamShareOfDefaultLimit: times(r.upstreamCalls, 1 / DEFAULT_UPSTREAM_LIMIT_PER_SECOND),
    // Measured at a million rows only: smaller sizes print "—".
    tickMs: connections === 1_000_000 ? costs.tickMsAt1M : NaN,
    workerRssMiB: costs.workerRssMiBAt100k,
  };
}

/** The resources, in the order docs/scaling.md shows them. */
export const RESOURCES: { key: string; name: string; unit: string; from: string }[] = [
  { key: 'syncs', name: 'Syncs', unit: '/s', from: 'syncs per connection-hour' },
  { key: 'upstreamCalls', name: 'Upstream calls', unit: '/s', from: 'calls per connection-hour' },
  {
    key: 'upstreamShareOfDefaultLimit',
    name: `Upstream calls ÷ the default limit (${DEFAULT_UPSTREAM_LIMIT_PER_SECOND}/s)`,
    unit: '×',
    from: 'UPSTREAM_RATE_LIMIT_PER_SECOND',
  },
  { key: 'feedPolls200', name: 'Feed polls', unit: '/s', from: 'FEED_POLLS_PER_DAY' },
  { key: 'shareViews', name: 'Share page views', unit: '/s', from: 'SHARE_VIEWS_PER_CONNECTION_DAY' },
  {
    key: 'pushes',
    name: 'CalDAV pushes',
    unit: '/s',
    from: 'CALDAV_SHARE × FEED_CHANGES_PER_CONNECTION_DAY',
  },
  {
    key: 'deliveries',
    name: 'Webhook deliveries',
    unit: '/s',
    from: 'WEBHOOK_SHARE × FEED_CHANGES_PER_CONNECTION_DAY',
  },
  {
    key: 'workerCores',
    name: 'Worker CPU',
    unit: 'cores',
    from: 'worker CPU per sync and call, push, delivery',
  },
  { key: 'schedulerCores', name: 'Scheduler CPU', unit: 'cores', from: 'scheduler CPU per sync' },
  { key: 'webCores', name: 'Web CPU', unit: 'cores', from: 'web CPU per rendered feed, share view' },
  {
    key: 'redisCommands',
    name: 'Redis commands',
    unit: '/s',
    from: 'commands per sync and call, push, delivery, request',
  },
  {
    key: 'redisCores',
    name: 'Redis CPU (one core per node)',
    unit: 'cores',
    from: 'Redis CPU per sync and call, push, delivery, request',
  },
  {
    key: 'redisInMBps',
    name: 'Redis network in',
    unit: 'MB/s',
    from: 'bytes per sync and call, push, delivery',
  },
  {
    key: 'redisOutMBps',
    name: 'Redis network out',
    unit: 'MB/s',
    from: 'bytes per sync and call, push, delivery',
  },
  { key: 'redisMemoryGiB', name: 'Redis memory', unit: 'GiB', from: 'Redis bytes per connection' },
  {
    key: 'postgresRowWrites',
    name: 'Postgres row writes',
    unit: '/s',
    from: 'row writes per sync, change, push, delivery',
  },
  {
    key: 'postgresRowsPerYearMillions',
    name: 'Postgres rows added a year',
    unit: 'million',
    from: 'rows per connection-day',
  },
  {
    key: 'postgresGiBAfterAYear',
    name: 'Postgres storage after a year',
    unit: 'GiB',
    from: 'MiB per connection-year with retention',
  },
  {
    key: 'egressMBps',
    name: 'Egress (feeds, share pages, pushes, webhooks)',
    unit: 'MB/s',
    from: 'bytes per answer, push, delivery',
  },
  { key: 'tickMs', name: 'Scheduler tick (1,000,000 connection rows)', unit: 'ms', from: 'the tick bench' },
  {
    key: 'workerRssMiB',
    name: "Worker RSS (per process, after a full GC, at the worker-rss run's last sample)",
    unit: 'MiB',
    from: 'the worker-rss bench',
  },
];

export function capacityModel(costs: UnitCosts): Resource[] {
  const at = SIZES.map((size) => capacityAt(costs, size));
  return RESOURCES.map((resource) => ({
    name: resource.name,
    unit: resource.unit,
    from: resource.from,
    values: at.map((values) => values[resource.key] ?? null),
  }));
}
