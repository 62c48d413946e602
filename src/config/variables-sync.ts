// The sync pipeline: bands and their cadence, the call budget and rate limit, retries, the worker's pool,
// retention, and the health port of a process without the web role.
import { z } from 'zod';
import { bandsWithin, cadenceBandsSchema, intervalSchema, type AdaptBounds } from './sync-bands.js';
import { positiveInt, timeoutMs } from './value-schemas.js';
import { section, variable } from './variable.js';

const ratio = z.coerce.number().min(0).max(0.5);

const adaptFactors = z.string().transform((v, ctx): AdaptBounds => {
  const [fastest, slowest, extra] = v.split(',').map((part) => Number(part.trim()));
  if (
    extra !== undefined ||
    fastest === undefined ||
    slowest === undefined ||
    !(fastest > 0 && fastest <= 1) ||
    !(slowest >= 1 && slowest <= 24)
  ) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be <fastest>,<slowest> with 0 < fastest ≤ 1 ≤ slowest ≤ 24',
    });
    return z.NEVER;
  }
  return { fastest, slowest };
});

const optionalBudget = z
  .string()
  .transform((v) => (v.trim() === '' ? undefined : Number(v)))
  .refine(
    (v) => v === undefined || (Number.isFinite(v) && v >= 0 && v <= 100_000),
    'must be a number of calls per second (0: no budget)',
  );

export const syncSection = section({
  variables: {
    bands: variable({
      name: 'SYNC_BANDS',
      description:
        'Cadence by date band: comma-separated `<days>=<interval>`, nearest first, the last `*` (the rest of the horizon). Days are bookable days: dates with an open slot, counted from today (a date with nothing open stays in the band of its calendar distance). `2d=4m,4d=10m,7d=30m,*=2h` pulls the first two bookable days every 4 minutes, the next two every 10, the next three every 30, the rest every 2 hours; `*=15m` pulls everything every 15 minutes.',
      // Chosen from the freshness frontier (docs/performance.md): 0-24 h p95 4.1 minutes at 0.76× the calls of
      // a fixed 15-minute schedule, every report band fresher than the bands before.
      default: '2d=4m,4d=10m,7d=30m,*=2h',
      schema: cadenceBandsSchema,
    }),
    adapt: variable({
      name: 'SYNC_ADAPT_FACTORS',
      description:
        'How far a connection’s own activity moves its band intervals: `<fastest>,<slowest>` as factors of SYNC_BANDS (a band that saw changes goes faster, one that saw none slower); `1,1`, the default, turns adaptation off.',
      // Off: a booking's wait is set by the interval its band has when it happens, and adaptation mostly slows
      // quiet accounts to the slow bound, past the near band's target (the frontier, docs/performance.md).
      default: '1,1',
      schema: adaptFactors,
    }),
    accountIntervalSeconds: variable({
      name: 'SYNC_ACCOUNT_INTERVAL',
      description:
        'How often a scheduled sync also reads the profile and event types (GET /users/me, GET /events): by the first sync after this has passed, and at once when a slot list answers 404 or a stored slot went missing. A first sync and one asked for always read them.',
      default: '15m',
      schema: intervalSchema,
    }),
    callBudgetPerSecond: variable({
      name: 'SYNC_CALL_BUDGET_PER_SECOND',
      description:
        'Upstream calls per second the scheduler may plan for (nearest bands first; far ones wait when it is short). Empty: UPSTREAM_RATE_LIMIT_PER_SECOND, which stays the hard ceiling either way; 0: no budget.',
      default: '',
      schema: optionalBudget,
    }),
    jitterRatio: variable({
      name: 'SYNC_JITTER_RATIO',
      description:
        'Each next sync time moves by up to ± this share of the interval, so connections never fire together.',
      default: '0.1',
      schema: ratio,
    }),
    horizonDays: variable({
      name: 'SYNC_HORIZON_DAYS',
      description:
        'How many days ahead (from today in the connection’s zone) slots are pulled. A SYNC_BANDS band that starts at or beyond it is left out (logged once at start-up).',
      default: '28',
      schema: positiveInt(366),
    }),
    overviewWindowDays: variable({
      name: 'SYNC_OVERVIEW_WINDOW_DAYS',
      description:
        'Longest overview window requested; the API requires a period below two months (at most 58 days).',
      default: '58',
      schema: positiveInt(58),
    }),
    tickSeconds: variable({
      name: 'SYNC_TICK_SECONDS',
      description: 'How often the scheduler looks for due connections.',
      default: '30',
      schema: positiveInt(3600),
    }),
    maxAttempts: variable({
      name: 'SYNC_MAX_ATTEMPTS',
      description:
        'Attempts of one sync job before it fails for good (transient errors back off exponentially with jitter).',
      default: '6',
      schema: positiveInt(50),
    }),
    backoffMs: variable({
      name: 'SYNC_BACKOFF_MS',
      description: 'First retry delay of a failed sync; doubles with each attempt.',
      default: '5000',
      schema: positiveInt(3_600_000),
    }),
    workerConcurrency: variable({
      name: 'WORKER_CONCURRENCY',
      description: 'Sync jobs one worker process runs at once.',
      default: '4',
      schema: positiveInt(256),
    }),
    fetchConcurrency: variable({
      name: 'SYNC_FETCH_CONCURRENCY',
      description: 'Upstream requests one sync job has in flight at once.',
      default: '4',
      schema: positiveInt(64),
    }),
    rateLimit: {
      perSecond: variable({
        name: 'UPSTREAM_RATE_LIMIT_PER_SECOND',
        description: 'Upstream requests per second across all worker processes together; 0 means no limit.',
        default: '20',
        schema: z.coerce.number().min(0).max(100_000),
      }),
      burst: variable({
        name: 'UPSTREAM_RATE_LIMIT_BURST',
        description: 'Upstream requests that may start at the same instant within the rate limit.',
        default: '5',
        schema: positiveInt(10_000),
      }),
      audit: variable({
        name: 'UPSTREAM_RATE_LIMIT_AUDIT',
        description:
          "Record every granted upstream call in the Redis stream <REDIS_PREFIX>:upstream-rate:grants (last ~100,000; each entry's `at` is the Redis time in ms its call was scheduled to go), to audit the rate limit.",
        default: 'false',
        schema: z.enum(['true', 'false']).transform((v) => v === 'true'),
      }),
    },
    tokenRefreshMarginSeconds: variable({
      name: 'TOKEN_REFRESH_MARGIN_SECONDS',
      description:
        'Access tokens expiring within this many seconds (at most a quarter of their lifetime) are refreshed first.',
      default: '300',
      schema: z.coerce.number().int().min(0).max(86_400),
    }),
    workerLockSeconds: variable({
      name: 'WORKER_LOCK_SECONDS',
      description:
        'How long a worker holds a job without renewing; a killed worker’s job moves to another after this.',
      default: '30',
      schema: positiveInt(3600),
    }),
    shutdownGraceSeconds: variable({
      name: 'SHUTDOWN_GRACE_SECONDS',
      description:
        'On SIGTERM, how long in-flight syncs may run before they are handed back to the queue; also how long the webhook, CalDAV and tick workers are waited for.',
      default: '25',
      schema: z.coerce.number().int().min(0).max(3600),
    }),
    database: {
      statementTimeoutMs: variable({
        name: 'SYNC_STATEMENT_TIMEOUT_MS',
        description:
          'Longest a statement of a sync worker may run (a commit writes thousands of rows); 0 means no limit.',
        default: '120000',
        schema: timeoutMs,
      }),
      lockTimeoutMs: variable({
        name: 'SYNC_LOCK_TIMEOUT_MS',
        description:
          'Longest a sync worker’s statement waits for a lock or a pooled connection (the job retries); 0 means no limit.',
        default: '30000',
        schema: timeoutMs,
      }),
    },
    retention: {
      syncRunDays: variable({
        name: 'RETENTION_SYNC_RUNS_DAYS',
        description:
          'Sync runs older than this many days are pruned (rolled up per day first, for the reports); 0 keeps them all.',
        default: '90',
        schema: z.coerce.number().int().min(0).max(36_500),
      }),
      closedSlotDays: variable({
        name: 'RETENTION_CLOSED_SLOTS_DAYS',
        description: 'Slots that closed longer ago than this many days are pruned; 0 keeps them all.',
        default: '180',
        schema: z.coerce.number().int().min(0).max(36_500),
      }),
      compactAfterDays: variable({
        name: 'RETENTION_COMPACT_AFTER_DAYS',
        description:
          'Slots that closed, and sync runs that started, on a UTC day over for this many days (1: every day before today) are packed into one row per connection and day, the form reports read (every report answers the same), and superseded overviews are deleted; 0 keeps them row by row.',
        // Today's runs stay row by row for the connection page's list; reports read both forms.
        default: '1',
        schema: z.coerce.number().int().min(0).max(36_500),
      }),
      batchSize: variable({
        name: 'RETENTION_BATCH_SIZE',
        description:
          'Rows one pruning transaction deletes; small batches never hold what a sync or a feed waits for.',
        default: '1000',
        schema: positiveInt(100_000),
      }),
      intervalSeconds: variable({
        name: 'RETENTION_INTERVAL_SECONDS',
        description: 'How often the scheduler prunes (one scheduler at a time, under a Redis lock).',
        default: '3600',
        schema: positiveInt(7 * 86_400),
      }),
    },
    healthPort: variable({
      name: 'HEALTH_PORT',
      description:
        'Port on WEB_HOST where a worker or scheduler process without the web role serves /healthz, /readyz and /metrics; empty: none.',
      default: '',
      schema: z
        .string()
        .refine((v) => v === '' || /^\d+$/.test(v), 'must be a port number, or empty for none')
        .transform((v) => (v === '' ? undefined : Number(v)))
        .refine((v) => v === undefined || (v >= 1 && v <= 65_535), 'must be between 1 and 65535'),
    }),
  },
  check: (_values, env) =>
    env.SYNC_INTERVAL_SECONDS !== undefined && env.SYNC_INTERVAL_SECONDS !== ''
      ? [
          `SYNC_INTERVAL_SECONDS is replaced by SYNC_BANDS: for the same fixed schedule set SYNC_BANDS=*=${env.SYNC_INTERVAL_SECONDS}s`,
        ]
      : [],
  assemble: ({ bands: configured, callBudgetPerSecond, ...values }) => {
    // A band beyond the horizon would never be pulled, so never stop being due: every user of the bands
    // (scheduler, worker, metrics, admin page) takes this clipped list.
    const bands = bandsWithin(configured, values.horizonDays);
    return {
      ...values,
      /** SYNC_BANDS clipped to SYNC_HORIZON_DAYS, once, here: a band no date of the horizon falls in is left out. */
      bands,
      /** Names of the SYNC_BANDS left out by that clipping (logged once at start-up). */
      bandsBeyondHorizon: configured.filter((band) => !bands.includes(band)).map((band) => band.name),
      /** Calls per second the scheduler plans for (SYNC_CALL_BUDGET_PER_SECOND, else the rate limit). */
      callBudgetPerSecond: callBudgetPerSecond ?? values.rateLimit.perSecond,
      /** The nearest band's interval: how often a feed's subscribers may usefully poll. */
      intervalSeconds: Math.min(...bands.map((band) => band.intervalSeconds)),
    };
  },
});
