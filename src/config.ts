// Environment → one validated, typed Config. Every variable is declared once, in config/variables-<section>.ts,
// with its section, default and description; the README's configuration table is checked against these declarations by a test.
// A command asks only for the sections it uses (`slotfeed migrate` needs no OAuth client), and a wrong or
// missing value stops start-up with a message that names the variable.
import type { AdaptBounds, CadenceBand } from './config/sync-bands.js';
import { bandsWithin } from './config/sync-bands.js';
import { type Section, type VariableSpec } from './config/variable.js';
import { databaseVariables } from './config/variables-database.js';
import { logVariables } from './config/variables-log.js';
import { redisVariables } from './config/variables-redis.js';
import { syncVariables } from './config/variables-sync.js';
import { upstreamVariables } from './config/variables-upstream.js';
import { vaultVariables } from './config/variables-vault.js';
import { webVariables } from './config/variables-web.js';
import { webhooksVariables } from './config/variables-webhooks.js';

export const variables = {
  ...databaseVariables,
  ...redisVariables,
  ...logVariables,
  ...upstreamVariables,
  ...vaultVariables,
  ...syncVariables,
  ...webVariables,
  ...webhooksVariables,
} as const;

type Variables = typeof variables;
export type VariableName = keyof Variables;
type ValueOf<N extends VariableName> = Variables[N] extends VariableSpec<infer T> ? T : never;

export interface Config {
  database: {
    url: string;
    /** For the web role's and the scheduler's pool; 0 means none. */
    statementTimeoutMs: number;
    lockTimeoutMs: number;
  };
  redis: { url: string; prefix: string; clusterNodes: { host: string; port: number }[] };
  log: { level: ValueOf<'LOG_LEVEL'>; format: ValueOf<'LOG_FORMAT'> };
  upstream: {
    baseUrl: string;
    authUrl: string;
    clientId: string;
    clientSecret: string;
    redirectUri: string;
    scope: string;
    slotsQuery: { dateParam: string; timezoneParam: string };
    timeoutMs: number;
  };
  vault: { currentKey: string; previousKeys: string[] };
  webhooks: {
    allowPrivateTargets: boolean;
    timeoutMs: number;
    maxAttempts: number;
    retryBaseMs: number;
    disableAfterSeconds: number;
    dispatchIntervalMs: number;
    sweepIntervalSeconds: number;
    concurrency: number;
  };
  sync: {
    /** SYNC_BANDS clipped to SYNC_HORIZON_DAYS, once, here: a band no date of the horizon falls in is left out. */
    bands: CadenceBand[];
    /** Names of the SYNC_BANDS left out by that clipping (logged once at start-up). */
    bandsBeyondHorizon: string[];
    adapt: AdaptBounds;
    /** Calls per second the scheduler plans for (SYNC_CALL_BUDGET_PER_SECOND, else the rate limit). */
    callBudgetPerSecond: number;
    /** The nearest band's interval: how often a feed's subscribers may usefully poll. */
    intervalSeconds: number;
    jitterRatio: number;
    horizonDays: number;
    overviewWindowDays: number;
    tickSeconds: number;
    maxAttempts: number;
    backoffMs: number;
    workerConcurrency: number;
    fetchConcurrency: number;
    rateLimit: { perSecond: number; burst: number; audit: boolean };
    tokenRefreshMarginSeconds: number;
    workerLockSeconds: number;
    shutdownGraceSeconds: number;
    /** The worker's own pool. */
    database: { statementTimeoutMs: number; lockTimeoutMs: number };
    /** Health server of a process without the web role; undefined: none. */
    healthPort: number | undefined;
    retention: { syncRunDays: number; closedSlotDays: number; batchSize: number; intervalSeconds: number };
  };
  web: {
    host: string;
    port: number;
    publicBaseUrl: string;
    /** Empty: admin pages are disabled. */
    adminToken: string;
    feedDefaultDays: number;
    feedMaxEvents: number;
    feedGzip: boolean;
    /** How long a feed's last bytes keep serving, once its token can no longer be confirmed (0: never). */
    feedOutageGraceSeconds: number;
    /** false, true, or the proxies' addresses (comma-separated). */
    trustProxy: boolean | string;
    requestTimeoutMs: number;
    adminSessionSeconds: number;
    ownerSessionSeconds: number;
    /** Per client address and minute; 0 means no limit. */
    rateLimits: { connectPerMinute: number; feedsPerMinute: number; apiPerMinute: number };
  };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Reads and validates the variables of the requested sections; throws ConfigError listing every problem. */
export function loadConfig<S extends Section>(env: Env, sections: readonly S[]): Pick<Config, S> {
  const problems: string[] = [];
  const read = <N extends VariableName>(name: N): ValueOf<N> => {
    const spec = variables[name] as VariableSpec<ValueOf<N>>;
    const raw = env[name] === undefined || env[name] === '' ? spec.default : env[name];
    if (raw === undefined) {
      problems.push(`${name} is required: ${spec.description}`);
      return undefined as ValueOf<N>;
    }
    const parsed = spec.schema.safeParse(raw);
    if (!parsed.success) {
      const shown = spec.secret ? '' : ` (got ${JSON.stringify(raw)})`;
      problems.push(`${name} ${parsed.error.issues[0]?.message ?? 'is invalid'}${shown}`);
      return undefined as ValueOf<N>;
    }
    return parsed.data;
  };

  const builders: { [K in Section]: () => Config[K] } = {
    database: () => ({
      url: read('DATABASE_URL'),
      statementTimeoutMs: read('DATABASE_STATEMENT_TIMEOUT_MS'),
      lockTimeoutMs: read('DATABASE_LOCK_TIMEOUT_MS'),
    }),
    redis: () => {
      const redis = {
        url: read('REDIS_URL'),
        prefix: read('REDIS_PREFIX'),
        clusterNodes: read('REDIS_CLUSTER_NODES'),
      };
      // BullMQ's scripts and slotfeed's own touch several keys at once: on a cluster they must share a slot.
      if (redis.clusterNodes?.length && redis.prefix && !/\{[^{}]+\}/.test(redis.prefix)) {
        problems.push(
          `REDIS_PREFIX must hold a hash tag such as {${redis.prefix}} when REDIS_CLUSTER_NODES is set: every key of one installation must be in one slot`,
        );
      }
      return redis;
    },
    log: () => ({ level: read('LOG_LEVEL'), format: read('LOG_FORMAT') }),
    upstream: () => ({
      baseUrl: read('CALENDBOOK_BASE_URL'),
      authUrl: read('CALENDBOOK_AUTH_URL'),
      clientId: read('CALENDBOOK_CLIENT_ID'),
      clientSecret: read('CALENDBOOK_CLIENT_SECRET'),
      redirectUri: read('CALENDBOOK_REDIRECT_URI'),
      scope: read('CALENDBOOK_SCOPE'),
      slotsQuery: {
        dateParam: read('CALENDBOOK_SLOTS_DATE_PARAM'),
        timezoneParam: read('CALENDBOOK_SLOTS_TIMEZONE_PARAM'),
      },
      timeoutMs: read('CALENDBOOK_TIMEOUT_MS'),
    }),
    vault: () => ({
      currentKey: read('TOKEN_ENCRYPTION_KEY'),
      previousKeys: read('TOKEN_ENCRYPTION_KEYS_PREVIOUS'),
    }),
    webhooks: () => ({
      allowPrivateTargets: read('WEBHOOK_ALLOW_PRIVATE_TARGETS'),
      timeoutMs: read('WEBHOOK_TIMEOUT_MS'),
      maxAttempts: read('WEBHOOK_MAX_ATTEMPTS'),
      retryBaseMs: read('WEBHOOK_RETRY_BASE_MS'),
      disableAfterSeconds: read('WEBHOOK_DISABLE_AFTER_SECONDS'),
      dispatchIntervalMs: read('WEBHOOK_DISPATCH_INTERVAL_MS'),
      sweepIntervalSeconds: read('WEBHOOK_SWEEP_INTERVAL_SECONDS'),
      concurrency: read('WEBHOOK_CONCURRENCY'),
    }),
    sync: () => {
      const configured = read('SYNC_BANDS');
      const horizonDays = read('SYNC_HORIZON_DAYS');
      // A band beyond the horizon would never be pulled, so never stop being due: every user of the bands
      // (scheduler, worker, metrics, admin page) takes this clipped list.
      const bands = configured && horizonDays ? bandsWithin(configured, horizonDays) : configured;
      const rateLimit = {
        perSecond: read('UPSTREAM_RATE_LIMIT_PER_SECOND'),
        burst: read('UPSTREAM_RATE_LIMIT_BURST'),
        audit: read('UPSTREAM_RATE_LIMIT_AUDIT'),
      };
      if (env.SYNC_INTERVAL_SECONDS !== undefined && env.SYNC_INTERVAL_SECONDS !== '') {
        problems.push(
          `SYNC_INTERVAL_SECONDS is replaced by SYNC_BANDS: for the same fixed schedule set SYNC_BANDS=*=${env.SYNC_INTERVAL_SECONDS}s`,
        );
      }
      return {
        bands,
        bandsBeyondHorizon:
          configured?.filter((band) => !bands?.includes(band)).map((band) => band.name) ?? [],
        adapt: read('SYNC_ADAPT_FACTORS'),
        callBudgetPerSecond: read('SYNC_CALL_BUDGET_PER_SECOND') ?? rateLimit.perSecond,
        intervalSeconds: bands ? Math.min(...bands.map((band) => band.intervalSeconds)) : 0,
        jitterRatio: read('SYNC_JITTER_RATIO'),
        horizonDays,
        overviewWindowDays: read('SYNC_OVERVIEW_WINDOW_DAYS'),
        tickSeconds: read('SYNC_TICK_SECONDS'),
        maxAttempts: read('SYNC_MAX_ATTEMPTS'),
        backoffMs: read('SYNC_BACKOFF_MS'),
        workerConcurrency: read('WORKER_CONCURRENCY'),
        fetchConcurrency: read('SYNC_FETCH_CONCURRENCY'),
        rateLimit,
        tokenRefreshMarginSeconds: read('TOKEN_REFRESH_MARGIN_SECONDS'),
        workerLockSeconds: read('WORKER_LOCK_SECONDS'),
        shutdownGraceSeconds: read('SHUTDOWN_GRACE_SECONDS'),
        database: {
          statementTimeoutMs: read('SYNC_STATEMENT_TIMEOUT_MS'),
          lockTimeoutMs: read('SYNC_LOCK_TIMEOUT_MS'),
        },
        healthPort: read('HEALTH_PORT'),
        retention: {
          syncRunDays: read('RETENTION_SYNC_RUNS_DAYS'),
          closedSlotDays: read('RETENTION_CLOSED_SLOTS_DAYS'),
          batchSize: read('RETENTION_BATCH_SIZE'),
          intervalSeconds: read('RETENTION_INTERVAL_SECONDS'),
        },
      };
    },
    web: () => ({
      host: read('WEB_HOST'),
      port: read('WEB_PORT'),
      publicBaseUrl: read('PUBLIC_BASE_URL'),
      adminToken: read('ADMIN_TOKEN'),
      feedDefaultDays: read('FEED_DEFAULT_DAYS'),
      feedMaxEvents: read('FEED_MAX_EVENTS'),
      feedGzip: read('FEED_GZIP'),
      feedOutageGraceSeconds: read('FEED_OUTAGE_GRACE_SECONDS'),
      trustProxy: read('TRUST_PROXY'),
      requestTimeoutMs: read('WEB_REQUEST_TIMEOUT_MS'),
      adminSessionSeconds: read('ADMIN_SESSION_SECONDS'),
      ownerSessionSeconds: read('OWNER_SESSION_SECONDS'),
      rateLimits: {
        connectPerMinute: read('CONNECT_RATE_LIMIT_PER_MINUTE'),
        feedsPerMinute: read('FEED_RATE_LIMIT_PER_MINUTE'),
        apiPerMinute: read('API_RATE_LIMIT_PER_MINUTE'),
      },
    }),
  };

  const config = {} as Pick<Config, S>;
  for (const section of new Set(sections)) {
    (config as Record<string, unknown>)[section] = builders[section]();
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** One row per variable, for the README's configuration table and `slotfeed --help`. */
export function describeVariables(): {
  name: VariableName;
  section: Section;
  default?: string;
  description: string;
}[] {
  return (Object.keys(variables) as VariableName[]).map((name) => {
    const spec: VariableSpec<unknown> = variables[name];
    return { name, section: spec.section, default: spec.default, description: spec.description };
  });
}
