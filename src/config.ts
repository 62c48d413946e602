// Environment → one validated, typed Config. Every variable is declared once below, with its section, default
// and description; the README's configuration table is checked against these declarations by a test.
// A command asks only for the sections it uses (`slotfeed migrate` needs no OAuth client), and a wrong or
// missing value stops start-up with a message that names the variable.
import { z } from 'zod';
import { weaknessOf } from './lib/secret-strength.js';
import { bandsWithin, cadenceBandsSchema, type AdaptBounds, type CadenceBand } from './config/sync-bands.js';

type Section = 'database' | 'redis' | 'log' | 'upstream' | 'vault' | 'sync' | 'web' | 'webhooks';

interface VariableSpec<T> {
  section: Section;
  description: string;
  /** Shown in docs and used when the variable is unset; absent means required. */
  default?: string;
  /** Secrets are never echoed back in error messages. */
  secret?: boolean;
  schema: z.ZodType<T>;
}

const postgresUrl = z
  .string()
  .url()
  .refine((v) => /^postgres(ql)?:\/\//.test(v), 'must be a postgres:// or postgresql:// URL');
const redisUrl = z
  .string()
  .url()
  .refine((v) => /^rediss?:\/\//.test(v), 'must be a redis:// or rediss:// URL');
const httpUrl = z
  .string()
  .url()
  .refine((v) => /^https?:\/\//.test(v), 'must be an http:// or https:// URL')
  .transform((v) => v.replace(/\/+$/, ''));
const positiveInt = (max: number) => z.coerce.number().int().min(1).max(max);
/** Milliseconds, 0 meaning no limit. */
const timeoutMs = z.coerce.number().int().min(0).max(3_600_000);
const base64Key = z
  .string()
  .refine(
    (v) => Buffer.from(v, 'base64').length === 32,
    'must be 32 random bytes, base64-encoded (openssl rand -base64 32)',
  );
const base64KeyList = z
  .string()
  .transform((v) =>
    v
      .split(',')
      .map((k) => k.trim())
      .filter((k) => k.length > 0),
  )
  .refine(
    (keys) => keys.every((k) => Buffer.from(k, 'base64').length === 32),
    'each key must be 32 bytes, base64-encoded',
  );
const ratio = z.coerce.number().min(0).max(0.5);
const adaptFactors = z.string().transform((v, ctx) => {
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
const queryParamName = z.string().regex(/^[A-Za-z0-9_.-]+$/, 'must be a plain query parameter name');

// What fastify's trustProxy takes: true trusts every hop, so the left-most X-Forwarded-For entry, which the
// client itself may have written, becomes the address rate limits count by.
// (A hop count is not offered: fastify 5.12 trusts nobody for one, since it cannot check the nearest peer.)
const trustProxy = z.string().transform((v, ctx) => {
  if (v === 'true' || v === 'false') return v === 'true';
  if (/^[0-9A-Fa-f.:/]+(\s*,\s*[0-9A-Fa-f.:/]+)*$/.test(v)) return v.replace(/\s+/g, '');
  ctx.addIssue({ code: 'custom', message: 'must be true, false, or the proxies’ addresses or CIDRs' });
  return z.NEVER;
});

/** Generated tokens pass easily (see secret-strength.ts); 32 characters of base64 are ~190 bits. */
const ADMIN_TOKEN_STRENGTH = { minLength: 32, minBits: 80 };

function variable<T>(spec: VariableSpec<T>): VariableSpec<T> {
  return spec;
}

export const variables = {
  DATABASE_URL: variable({
    section: 'database',
    description: 'Postgres connection URL.',
    secret: true,
    schema: postgresUrl,
  }),
  DATABASE_STATEMENT_TIMEOUT_MS: variable({
    section: 'database',
    description:
      'Longest a statement of the web role or the scheduler may run before Postgres cancels it; 0 means no limit.',
    default: '10000',
    schema: timeoutMs,
  }),
  DATABASE_LOCK_TIMEOUT_MS: variable({
    section: 'database',
    description:
      'Longest such a statement waits for a lock, and a query for a free pooled connection; 0 means no limit.',
    default: '3000',
    schema: timeoutMs,
  }),
  REDIS_URL: variable({
    section: 'redis',
    description: 'Redis connection URL (BullMQ queues, locks, OAuth state).',
    default: 'redis://127.0.0.1:6379',
    secret: true,
    schema: redisUrl,
  }),
  REDIS_PREFIX: variable({
    section: 'redis',
    description:
      'Prefix of every Redis key slotfeed writes, so several installations can share one Redis; on a Redis Cluster it must hold a hash tag, e.g. {slotfeed}.',
    default: 'slotfeed',
    schema: z
      .string()
      .regex(/^[A-Za-z0-9_:{}-]+$/, 'letters, digits, "_", ":", "-" and one {hash tag} only')
      .refine(
        (v) => !/[{}]/.test(v) || /^[^{}]*\{[^{}]+\}[^{}]*$/.test(v),
        'a hash tag is one {…} with something inside',
      ),
  }),
  REDIS_CLUSTER_NODES: variable({
    section: 'redis',
    description:
      'A Redis Cluster to use instead of REDIS_URL’s server: some of its nodes, host:port, comma-separated (credentials and TLS still come from REDIS_URL). Empty: a single server.',
    default: '',
    schema: z.string().transform((v, ctx) => {
      const nodes = v
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n !== '');
      const parsed = nodes.map((node) => /^(\[[0-9a-fA-F:]+\]|[^:\s]+):(\d{1,5})$/.exec(node));
      if (parsed.some((m) => m === null)) {
        ctx.addIssue({ code: 'custom', message: 'must be host:port pairs, comma-separated' });
        return z.NEVER;
      }
      return parsed.map((m) => ({ host: m![1]!.replace(/^\[|\]$/g, ''), port: Number(m![2]) }));
    }),
  }),
  LOG_LEVEL: variable({
    section: 'log',
    description: 'pino log level: fatal, error, warn, info, debug, trace or silent.',
    default: 'info',
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  }),
  LOG_FORMAT: variable({
    section: 'log',
    description:
      'json, pretty, or auto: pretty (colourised, one line per event) on a terminal, JSON lines otherwise.',
    default: 'auto',
    schema: z.enum(['auto', 'json', 'pretty']),
  }),
  CALENDBOOK_BASE_URL: variable({
    section: 'upstream',
    description:
      'Base URL of the scheduling service API (`/events`, `/users/me`, `/calendars/…` hang below it).',
    schema: httpUrl,
  }),
  CALENDBOOK_AUTH_URL: variable({
    section: 'upstream',
    description: 'Base URL of its OAuth 2.0 authorization server (`/login`, `/oauth2/token`).',
    schema: httpUrl,
  }),
  CALENDBOOK_CLIENT_ID: variable({
    section: 'upstream',
    description: 'OAuth client id from the partner portal.',
    schema: z.string().min(1),
  }),
  CALENDBOOK_CLIENT_SECRET: variable({
    section: 'upstream',
    description: 'OAuth client secret from the partner portal.',
    secret: true,
    schema: z.string().min(1),
  }),
  CALENDBOOK_REDIRECT_URI: variable({
    section: 'upstream',
    description:
      "Redirect URI registered in the portal; slotfeed's `/oauth/callback` as users' browsers reach it.",
    schema: httpUrl,
  }),
  CALENDBOOK_SCOPE: variable({
    section: 'upstream',
    description: 'Scopes requested at authorization (space-separated); empty requests the default scopes.',
    default: '',
    schema: z.string(),
  }),
  CALENDBOOK_SLOTS_DATE_PARAM: variable({
    section: 'upstream',
    description:
      'Query parameter that carries the date of `GET /calendars/{id}/slots` (the API description is silent).',
    default: 'date',
    schema: queryParamName,
  }),
  CALENDBOOK_SLOTS_TIMEZONE_PARAM: variable({
    section: 'upstream',
    description: 'Query parameter that carries the time zone of `GET /calendars/{id}/slots`.',
    default: 'timezone',
    schema: queryParamName,
  }),
  CALENDBOOK_TIMEOUT_MS: variable({
    section: 'upstream',
    description: 'Timeout of every upstream request, in milliseconds.',
    default: '10000',
    schema: positiveInt(120_000),
  }),
  TOKEN_ENCRYPTION_KEY: variable({
    section: 'vault',
    description:
      'Key that encrypts OAuth tokens at rest (AES-256-GCM): 32 random bytes, base64 (`openssl rand -base64 32`).',
    secret: true,
    schema: base64Key,
  }),
  TOKEN_ENCRYPTION_KEYS_PREVIOUS: variable({
    section: 'vault',
    description: 'Comma-separated older keys, used only to decrypt tokens sealed before a key rotation.',
    default: '',
    secret: true,
    schema: base64KeyList,
  }),
  SYNC_BANDS: variable({
    section: 'sync',
    description:
      'Cadence by date band: comma-separated `<days ahead>=<interval>`, nearest first, the last `*` (the rest of the horizon). `4d=10m,7d=40m,*=3h` pulls today and the next three days every 10 minutes, the rest of the week every 40, the rest every 3 hours; `*=15m` pulls everything every 15 minutes.',
    default: '4d=10m,7d=40m,*=3h',
    schema: cadenceBandsSchema,
  }),
  SYNC_ADAPT_FACTORS: variable({
    section: 'sync',
    description:
      'How far a connection’s own activity moves its band intervals: `<fastest>,<slowest>` as factors of SYNC_BANDS (a band that saw changes goes faster, one that saw none slower); `1,1` turns adaptation off.',
    default: '0.5,1.5',
    schema: adaptFactors,
  }),
  SYNC_CALL_BUDGET_PER_SECOND: variable({
    section: 'sync',
    description:
      'Upstream calls per second the scheduler may plan for (nearest bands first; far ones wait when it is short). Empty: UPSTREAM_RATE_LIMIT_PER_SECOND, which stays the hard ceiling either way; 0: no budget.',
    default: '',
    schema: optionalBudget,
  }),
  SYNC_JITTER_RATIO: variable({
    section: 'sync',
    description:
      'Each next sync time moves by up to ± this share of the interval, so connections never fire together.',
    default: '0.1',
    schema: ratio,
  }),
  SYNC_HORIZON_DAYS: variable({
    section: 'sync',
    description:
      'How many days ahead (from today in the connection’s zone) slots are pulled. A SYNC_BANDS band that starts at or beyond it is left out (logged once at start-up).',
    default: '28',
    schema: positiveInt(366),
  }),
  SYNC_OVERVIEW_WINDOW_DAYS: variable({
    section: 'sync',
    description:
      'Longest overview window requested; the API requires a period below two months (at most 58 days).',
    default: '58',
    schema: positiveInt(58),
  }),
  SYNC_TICK_SECONDS: variable({
    section: 'sync',
    description: 'How often the scheduler looks for due connections.',
    default: '30',
    schema: positiveInt(3600),
  }),
  SYNC_MAX_ATTEMPTS: variable({
    section: 'sync',
    description:
      'Attempts of one sync job before it fails for good (transient errors back off exponentially with jitter).',
    default: '6',
    schema: positiveInt(50),
  }),
  SYNC_BACKOFF_MS: variable({
    section: 'sync',
    description: 'First retry delay of a failed sync; doubles with each attempt.',
    default: '5000',
    schema: positiveInt(3_600_000),
  }),
  WORKER_CONCURRENCY: variable({
    section: 'sync',
    description: 'Sync jobs one worker process runs at once.',
    default: '4',
    schema: positiveInt(256),
  }),
  SYNC_FETCH_CONCURRENCY: variable({
    section: 'sync',
    description: 'Upstream requests one sync job has in flight at once.',
    default: '4',
    schema: positiveInt(64),
  }),
  UPSTREAM_RATE_LIMIT_PER_SECOND: variable({
    section: 'sync',
    description: 'Upstream requests per second across all worker processes together; 0 means no limit.',
    default: '20',
    schema: z.coerce.number().min(0).max(100_000),
  }),
  UPSTREAM_RATE_LIMIT_BURST: variable({
    section: 'sync',
    description: 'Upstream requests that may start at the same instant within the rate limit.',
    default: '5',
    schema: positiveInt(10_000),
  }),
  UPSTREAM_RATE_LIMIT_AUDIT: variable({
    section: 'sync',
    description:
      'Record every granted upstream call in the Redis stream <REDIS_PREFIX>:upstream-rate:grants (last ~100,000), to audit the rate limit.',
    default: 'false',
    schema: z.enum(['true', 'false']).transform((v) => v === 'true'),
  }),
  TOKEN_REFRESH_MARGIN_SECONDS: variable({
    section: 'sync',
    description:
      'Access tokens expiring within this many seconds (at most a quarter of their lifetime) are refreshed first.',
    default: '300',
    schema: z.coerce.number().int().min(0).max(86_400),
  }),
  WORKER_LOCK_SECONDS: variable({
    section: 'sync',
    description:
      'How long a worker holds a job without renewing; a killed worker’s job moves to another after this.',
    default: '30',
    schema: positiveInt(3600),
  }),
  SHUTDOWN_GRACE_SECONDS: variable({
    section: 'sync',
    description: 'On SIGTERM, how long in-flight syncs may run before they are handed back to the queue.',
    default: '25',
    schema: z.coerce.number().int().min(0).max(3600),
  }),
  SYNC_STATEMENT_TIMEOUT_MS: variable({
    section: 'sync',
    description:
      'Longest a statement of a sync worker may run (a commit writes thousands of rows); 0 means no limit.',
    default: '120000',
    schema: timeoutMs,
  }),
  SYNC_LOCK_TIMEOUT_MS: variable({
    section: 'sync',
    description:
      'Longest a sync worker’s statement waits for a lock or a pooled connection (the job retries); 0 means no limit.',
    default: '30000',
    schema: timeoutMs,
  }),
  RETENTION_SYNC_RUNS_DAYS: variable({
    section: 'sync',
    description:
      'Sync runs older than this many days are pruned (rolled up per day first, for the reports); 0 keeps them all.',
    default: '90',
    schema: z.coerce.number().int().min(0).max(36_500),
  }),
  RETENTION_CLOSED_SLOTS_DAYS: variable({
    section: 'sync',
    description: 'Slots that closed longer ago than this many days are pruned; 0 keeps them all.',
    default: '180',
    schema: z.coerce.number().int().min(0).max(36_500),
  }),
  RETENTION_BATCH_SIZE: variable({
    section: 'sync',
    description:
      'Rows one pruning transaction deletes; small batches never hold what a sync or a feed waits for.',
    default: '1000',
    schema: positiveInt(100_000),
  }),
  RETENTION_INTERVAL_SECONDS: variable({
    section: 'sync',
    description: 'How often the scheduler prunes (one scheduler at a time, under a Redis lock).',
    default: '3600',
    schema: positiveInt(7 * 86_400),
  }),
  HEALTH_PORT: variable({
    section: 'sync',
    description:
      'Port on WEB_HOST where a worker or scheduler process without the web role serves /healthz, /readyz and /metrics; empty: none.',
    default: '',
    schema: z
      .string()
      .refine((v) => v === '' || /^\d+$/.test(v), 'must be a port number, or empty for none')
      .transform((v) => (v === '' ? undefined : Number(v)))
      .refine((v) => v === undefined || (v >= 1 && v <= 65_535), 'must be between 1 and 65535'),
  }),
  WEB_HOST: variable({
    section: 'web',
    description: 'Interface the web server listens on (0.0.0.0 in a container).',
    default: '127.0.0.1',
    schema: z.string().min(1),
  }),
  WEB_PORT: variable({
    section: 'web',
    description: 'Port of the web server (feeds, connect flow, admin, health and metrics).',
    default: '3000',
    schema: z.coerce.number().int().min(0).max(65_535),
  }),
  PUBLIC_BASE_URL: variable({
    section: 'web',
    description: 'Base URL at which calendar apps and browsers reach slotfeed; feed links are built from it.',
    default: 'http://127.0.0.1:3000',
    schema: httpUrl,
  }),
  ADMIN_TOKEN: variable({
    section: 'web',
    description:
      'Token that opens the admin page and the queue dashboard: 32+ random characters (`openssl rand -base64 32`); empty disables admin.',
    default: '',
    secret: true,
    // The message follows the variable's name: "ADMIN_TOKEN is too short: …".
    schema: z.string().superRefine((v, ctx) => {
      const weakness = v === '' ? undefined : weaknessOf(v, ADMIN_TOKEN_STRENGTH);
      if (weakness !== undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `${weakness} (make one with \`openssl rand -base64 32\`, or leave it empty to disable admin)`,
        });
      }
    }),
  }),
  FEED_DEFAULT_DAYS: variable({
    section: 'web',
    description: 'Days ahead a feed shows when it does not set its own day range.',
    default: '28',
    schema: positiveInt(366),
  }),
  FEED_MAX_EVENTS: variable({
    section: 'web',
    description:
      'Most events one feed carries (earliest first), so a feed stays small enough for every calendar app.',
    default: '1000',
    schema: positiveInt(100_000),
  }),
  FEED_GZIP: variable({
    section: 'web',
    description: 'Compress feed responses with gzip when the client asks for it (true or false).',
    default: 'true',
    schema: z.enum(['true', 'false']).transform((v) => v === 'true'),
  }),
  FEED_OUTAGE_GRACE_SECONDS: variable({
    section: 'web',
    description:
      "Seconds a served feed keeps serving its last bytes while Postgres cannot answer, from its token's last confirmation; 0: off.",
    default: '21600',
    // A week at most: past that, the free time shown is too old to be worth serving.
    schema: z.coerce.number().int().min(0).max(604_800),
  }),
  TRUST_PROXY: variable({
    section: 'web',
    description:
      'Whose X-Forwarded-* headers to believe: false; the reverse proxies’ addresses or CIDRs, comma-separated; or true (every hop: then clients can pick the address rate limits count them by).',
    default: 'false',
    schema: trustProxy,
  }),
  WEB_REQUEST_TIMEOUT_MS: variable({
    section: 'web',
    description:
      'Longest a client may take to send a whole request, headers and body; a slower one gets 408 and is disconnected.',
    default: '10000',
    schema: z.coerce.number().int().min(100).max(600_000),
  }),
  ADMIN_SESSION_SECONDS: variable({
    section: 'web',
    description: 'How long an admin sign-in lasts; signing out ends it at once on every copy of the cookie.',
    default: '28800',
    schema: z.coerce.number().int().min(60).max(604_800),
  }),
  OWNER_SESSION_SECONDS: variable({
    section: 'web',
    description:
      'How long an account owner stays signed in to their page (signed in with Calendbook); signing out, or deleting their data, ends it at once.',
    default: '1209600',
    schema: z.coerce.number().int().min(60).max(7_776_000),
  }),
  CONNECT_RATE_LIMIT_PER_MINUTE: variable({
    section: 'web',
    description:
      'Requests one client address may make to /connect per minute, and as many to /oauth/callback; 0 means no limit.',
    default: '20',
    schema: z.coerce.number().int().min(0).max(1_000_000),
  }),
  FEED_RATE_LIMIT_PER_MINUTE: variable({
    section: 'web',
    description:
      'Feed requests one client address may make per minute (calendar services poll many feeds from few addresses); 0 means no limit.',
    default: '600',
    schema: z.coerce.number().int().min(0).max(1_000_000),
  }),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: variable({
    section: 'webhooks',
    description:
      'true: webhook endpoints on private, loopback and link-local addresses are allowed (a receiver on this host, tests); false refuses them (SSRF).',
    default: 'false',
    schema: z.enum(['true', 'false']).transform((v) => v === 'true'),
  }),
  WEBHOOK_TIMEOUT_MS: variable({
    section: 'webhooks',
    description: 'How long one delivery attempt waits for the receiver’s answer.',
    default: '10000',
    schema: z.coerce.number().int().min(100).max(120_000),
  }),
  WEBHOOK_MAX_ATTEMPTS: variable({
    section: 'webhooks',
    description:
      'Attempts per delivery, the first included; with WEBHOOK_RETRY_BASE_MS the retries span about a day.',
    default: '15',
    schema: positiveInt(30),
  }),
  WEBHOOK_RETRY_BASE_MS: variable({
    section: 'webhooks',
    description: 'The first retry’s delay; each further retry waits twice as long.',
    default: '5000',
    schema: z.coerce.number().int().min(1).max(3_600_000),
  }),
  WEBHOOK_DISABLE_AFTER_SECONDS: variable({
    section: 'webhooks',
    description:
      'An endpoint whose every delivery has failed for this long is disabled (the admin page says so).',
    default: '86400',
    schema: positiveInt(30 * 86400),
  }),
  WEBHOOK_DISPATCH_INTERVAL_MS: variable({
    section: 'webhooks',
    description:
      'How often a worker hands new deliveries to the queue when no sync of its own wrote any (those go at once).',
    default: '1000',
    schema: positiveInt(60_000),
  }),
  WEBHOOK_SWEEP_INTERVAL_SECONDS: variable({
    section: 'webhooks',
    description:
      'How often a worker looks for pending deliveries whose queued job was lost (it also looks at start, when Redis reconnects and when the queue’s keys vanish).',
    default: '60',
    schema: positiveInt(3600),
  }),
  WEBHOOK_CONCURRENCY: variable({
    section: 'webhooks',
    description: 'Deliveries one worker process attempts at the same time.',
    default: '8',
    schema: positiveInt(200),
  }),
  API_RATE_LIMIT_PER_MINUTE: variable({
    section: 'web',
    description:
      'JSON API requests one credential (or, without one, one client address) may make per minute; 0 means no limit.',
    default: '300',
    schema: z.coerce.number().int().min(0).max(1_000_000),
  }),
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
