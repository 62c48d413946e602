// The composition root: config → shared clients → services → roles. Nothing else in slotfeed constructs a
// Prisma client, a Redis connection, a Postgres session or a queue; the commands (src/cli) and the tests take
// theirs from the functions here.
import type { Queue } from 'bullmq';
import type { RedisClient } from './lib/redis-connection.js';
import pg from 'pg';
import type { Config } from './config.js';
import type { PrismaClient } from './generated/prisma/client.js';
import type { Logger } from './log.js';
import { createMetrics, upstreamStatusLabel, type Metrics } from './lib/metrics.js';
import { schedulerReadiness, workerReadiness, type ReadinessCheck } from './lib/readiness.js';
import { createRedisConnection, redisTargetOf } from './lib/redis-connection.js';
import { createRedisRateLimiter } from './lib/redis-rate-limiter.js';
import type { Releasers } from './lib/releasers.js';
import { createRepeatedErrorLog, type RepeatedErrorLog } from './lib/repeated-errors.js';
import { createConnectionStore, type ConnectionStore } from './store/connections.js';
import { startFeedChangeListener, type FeedChangeListener } from './store/feed-change-listener.js';
import { createApiKeyStore, type ApiKeyStore } from './store/api-keys.js';
import { createWebhookStore, type WebhookStore } from './store/webhooks.js';
import { createWebhookDeliveryStore } from './store/webhook-deliveries.js';
import { createWebhookQueue, startWebhookWorker, type WebhookJobData } from './webhooks/webhook-queue.js';
import { createSignal, type Signal } from './lib/signal.js';
import { registerStateGauges } from './lib/state-gauges.js';
import { startRetention } from './sync/retention-schedule.js';
import { createRetentionStore } from './store/retention.js';
import {
  CONNECTION_STATUSES,
  createConnectionAdminStore,
  type ConnectionAdminStore,
} from './store/connection-admin.js';
import { createConnectionDetailStore } from './store/connection-detail.js';
import { createEventRevisionStore } from './store/event-revisions.js';
import { createFeedContentStore } from './store/feed-content.js';
import { createFeedStore, type FeedStore } from './store/feeds.js';
import { createFeedNameStore, type FeedNameStore } from './store/feed-names.js';
import type { PgSessions } from './store/pg-sessions.js';
import { createPostgresProbe, type PostgresProbe } from './store/postgres-probe.js';
import { createReportStore, type ReportStore } from './store/reports.js';
import { createSnapshotStore } from './store/snapshot-store.js';
import { createSyncProgressStore, type SyncProgressStore } from './store/sync-progress.js';
import { createTeamStore, type TeamStore } from './store/teams.js';
import { createPrismaClient, type PoolTimeouts } from './store/prisma-client.js';
import { createTokenVault, vaultKeyFromBase64, type TokenVault } from './store/token-vault.js';
import { createSyncQueue, createTickQueue, enqueueSyncs, type SyncJobData } from './sync/queues.js';
import { createRedisCallBudget } from './sync/call-budget.js';
import { startScheduler, tickIsScheduled, type TickDeps } from './sync/scheduler.js';
import type { SyncDeps } from './sync/sync-connection.js';
import { startSyncWorker } from './sync/sync-worker.js';
import { createApiClient, createOAuthClient } from './upstream/index.js';
import type { WebDeps } from './web/app.js';
import { startHealthServer } from './web/health-server.js';

export const DAEMON_SECTIONS = [
  'database',
  'redis',
  'log',
  'upstream',
  'vault',
  'sync',
  'web',
  'webhooks',
] as const;

export type DaemonConfig = Pick<Config, (typeof DAEMON_SECTIONS)[number]>;
export type Role = 'scheduler' | 'worker' | 'web';

export interface Clients {
  logger: Logger;
  /** The web role's and the scheduler's pool: short statement and lock timeouts (DATABASE_*_TIMEOUT_MS). */
  prisma: PrismaClient;
  /** The sync worker's pool: a commit may write thousands of rows, and giving up on a token write after a
   *  refresh would lose the rotated refresh token, so its timeouts are longer (SYNC_*_TIMEOUT_MS). */
  syncPrisma: PrismaClient;
  /** For commands (locks, rate limit, the queues, which only produce); fails fast when Redis is down. */
  redis: RedisClient;
  /** For BullMQ workers, which block on Redis and must never give up on a command. */
  bullRedis: RedisClient;
  /** Errors that repeat (every Redis client, queue and worker reports here): one line per interval each. */
  errors: RepeatedErrorLog;
  /** This process's metrics: counted into from the clients on (errors), served by the web role. */
  metrics: Metrics;
  /** Dedicated Postgres sessions outside the pools: readiness's and the feed change listener's. */
  pgSessions: PgSessions;
}

/** Opens the shared clients and registers how to close them, newest first. */
export function openDatabase(
  databaseUrl: string,
  releasers: Releasers,
  timeouts: PoolTimeouts = {},
  name = 'postgres',
): PrismaClient {
  const prisma = createPrismaClient(databaseUrl, timeouts);
  releasers.add(name, () => prisma.$disconnect());
  return prisma;
}

/** Opens sessions of their own on `databaseUrl`, for the readers a pool cannot serve (see pg-sessions.ts). */
export function pgSessionsFor(databaseUrl: string): PgSessions {
  return (settings) =>
    new pg.Client({
      connectionString: databaseUrl,
      application_name: settings.applicationName,
      ...(settings.connectTimeoutMs === undefined
        ? {}
        : { connectionTimeoutMillis: settings.connectTimeoutMs }),
      ...(settings.statementTimeoutMs === undefined
        ? {}
        : { statement_timeout: settings.statementTimeoutMs }),
      ...(settings.keepAlive === undefined ? {} : { keepAlive: settings.keepAlive }),
    });
}

/** The stores a command works through: the operator's view of connections, feeds, teams, keys, webhooks, reports. */
export interface CommandStores {
  connectionAdmin: ConnectionAdminStore;
  feeds: FeedStore;
  feedNames: FeedNameStore;
  teams: TeamStore;
  apiKeys: ApiKeyStore;
  webhooks: WebhookStore;
  reports: ReportStore;
}

/**
 * A command's database (`slotfeed connections | feeds | teams | api-keys | webhooks | report | sync`): one pool
 * with the web role's timeouts, and the stores over it. The command reads only the database section, and
 * opens Redis (below) only when it gets that far.
 */
export function openCommandDatabase(
  config: Pick<Config, 'database'> & Partial<Pick<Config, 'vault' | 'webhooks'>>,
  releasers: Releasers,
  logger: Logger,
): CommandStores {
  const prisma = openDatabase(config.database.url, releasers);
  // With the vault, feeds made or rotated here keep a sealed copy of their token for the owner's page, and
  // webhook endpoints can be made (their secrets are kept sealed).
  const vault = config.vault === undefined ? undefined : tokenVaultFor(config.vault);
  const feeds = createFeedStore(prisma, logger, vault);
  return {
    connectionAdmin: createConnectionAdminStore(prisma, feeds),
    feeds,
    feedNames: createFeedNameStore(prisma),
    teams: createTeamStore(prisma),
    apiKeys: createApiKeyStore(prisma),
    webhooks: createWebhookStore(prisma, vault, {
      allowPrivateTargets: config.webhooks?.allowPrivateTargets ?? false,
    }),
    reports: createReportStore(prisma),
  };
}

function tokenVaultFor(vault: Config['vault']): TokenVault {
  return createTokenVault(vaultKeyFromBase64(vault.currentKey), vault.previousKeys.map(vaultKeyFromBase64));
}

export function openClients(config: DaemonConfig, releasers: Releasers, logger: Logger): Clients {
  const prisma = openDatabase(config.database.url, releasers, config.database);
  // Opens no connection until a worker uses it.
  const syncPrisma = openDatabase(config.database.url, releasers, config.sync.database, 'postgres (sync)');
  const metrics = createMetrics();
  const errors = createRepeatedErrorLog(logger, { onReport: (source) => metrics.errors.inc({ source }) });
  const redis = createRedisConnection(redisTargetOf(config.redis), 'command', 'slotfeed', errors);
  releasers.add('redis', async () => void (await redis.quit()));
  const bullRedis = createRedisConnection(redisTargetOf(config.redis), 'blocking', 'slotfeed-bullmq', errors);
  releasers.add('redis (bullmq)', async () => void (await bullRedis.quit()));
  const pgSessions = pgSessionsFor(config.database.url);
  return { logger, prisma, syncPrisma, redis, bullRedis, errors, metrics, pgSessions };
}

/**
 * `slotfeed sync`'s clients besides the database: the sync queue, to add jobs and read their state, on one
 * fail-fast connection. No worker runs in that process, and a command must report a Redis outage, not wait
 * it out; the command's own calls fail with it, so the connection's and queue's error events add nothing.
 */
export function openSyncQueue(
  config: Pick<Config, 'redis'>,
  releasers: Releasers,
): { redis: RedisClient; syncQueue: Queue<SyncJobData> } {
  const redis = createRedisConnection(redisTargetOf(config.redis), 'command', 'slotfeed-cli');
  releasers.add('redis', async () => void (await redis.quit()));
  const quiet = { report: () => undefined, recovered: () => undefined };
  const syncQueue = createSyncQueue({ connection: redis, prefix: config.redis.prefix, errors: quiet });
  releasers.add('sync queue', () => syncQueue.close());
  return { redis, syncQueue };
}

export interface Services {
  connections: ConnectionStore;
  feeds: FeedStore;
  webhooks: WebhookStore;
  webhookQueue: Queue<WebhookJobData>;
  /** Raised when a commit in this process wrote webhook deliveries. */
  webhookWrites: Signal;
  metrics: Metrics;
  syncQueue: Queue<SyncJobData>;
  tickQueue: Queue;
  syncDeps: SyncDeps;
}

/** The upstream API and OAuth clients, reporting every call to `onCall`; `signal` aborts their calls. */
function createUpstreamClients(
  upstream: Config['upstream'],
  clock: Clock,
  onCall: (endpoint: string, outcome: { status?: number }) => void,
  signal?: AbortSignal,
) {
  const api = createApiClient({
    baseUrl: upstream.baseUrl,
    timeoutMs: upstream.timeoutMs,
    slotsQuery: upstream.slotsQuery,
    now: clock.now,
    ...(signal ? { signal } : {}),
    onCall,
  });
  const oauth = createOAuthClient({
    authUrl: upstream.authUrl,
    clientId: upstream.clientId,
    clientSecret: upstream.clientSecret,
    redirectUri: upstream.redirectUri,
    ...(upstream.scope ? { scope: upstream.scope } : {}),
    timeoutMs: upstream.timeoutMs,
    now: clock.now,
    ...(signal ? { signal } : {}),
    onCall,
  });
  return { api, oauth };
}

function countUpstreamCall(metrics: Metrics) {
  return (endpoint: string, outcome: { status?: number }) =>
    metrics.upstreamCalls.inc({ endpoint, status: upstreamStatusLabel(outcome.status) });
}

export interface Clock {
  now: () => Date;
  random: () => number;
  /** Runs `run` every `periodMs` until stopped (the scheduler's watchdog); absent: setInterval. */
  every?: (periodMs: number, run: () => Promise<void>) => () => void;
}

const systemClock: Clock = { now: () => new Date(), random: Math.random };

export function composeServices(
  config: DaemonConfig,
  clients: Clients,
  releasers: Releasers,
  clock: Clock = systemClock,
): Services {
  const vault = tokenVaultFor(config.vault);
  const connections = createConnectionStore(clients.prisma, vault);
  const syncConnections = createConnectionStore(clients.syncPrisma, vault);
  const feeds = createFeedStore(clients.prisma, clients.logger, vault);
  const metrics = clients.metrics;
  const prefix = config.redis.prefix;
  // Queues only produce here (workers have connections of their own), so they take the fail-fast connection,
  // as BullMQ advises for producers: an admin action or `slotfeed sync` fails instead of waiting for Redis.
  const queueSettings = { connection: clients.redis, prefix, errors: clients.errors };
  const syncQueue = createSyncQueue(queueSettings);
  releasers.add('sync queue', () => syncQueue.close());
  const tickQueue = createTickQueue(queueSettings);
  releasers.add('tick queue', () => tickQueue.close());
  const webhookWrites = createSignal();
  const limiter = createRedisRateLimiter(clients.redis, `${prefix}:upstream-rate`, config.sync.rateLimit);
  const upstream = config.upstream;

  const syncDeps: SyncDeps = {
    snapshots: createSnapshotStore(clients.syncPrisma),
    connections: syncConnections,
    redis: clients.redis,
    keyPrefix: prefix,
    limiter,
    // Every call these clients make waits at `limiter` first: API calls in the upstream session, token
    // refreshes in token-refresh.ts (before it takes the refresh lock, never under it).
    upstreamFor: ({ signal, onCall }) =>
      createUpstreamClients(
        upstream,
        clock,
        (endpoint, outcome) => {
          onCall(endpoint);
          countUpstreamCall(metrics)(endpoint, outcome);
        },
        signal,
      ),
    settings: {
      horizonDays: config.sync.horizonDays,
      overviewWindowDays: config.sync.overviewWindowDays,
      fetchConcurrency: config.sync.fetchConcurrency,
      bands: config.sync.bands,
      adapt: config.sync.adapt,
      intervalSeconds: config.sync.intervalSeconds,
      jitterRatio: config.sync.jitterRatio,
      tokenRefreshMarginSeconds: config.sync.tokenRefreshMarginSeconds,
      backoffMs: config.sync.backoffMs,
    },
    now: clock.now,
    random: clock.random,
    logger: clients.logger,
    metrics,
    // The worker role's dispatcher listens (startRoles); a process without it leaves them to the interval.
    onWebhookDeliveries: () => webhookWrites.notify(),
  };
  const webhooks = createWebhookStore(clients.prisma, vault, {
    allowPrivateTargets: config.webhooks.allowPrivateTargets,
  });
  const webhookQueue = createWebhookQueue(queueSettings);
  releasers.add('webhook queue', () => webhookQueue.close());
  return {
    connections,
    feeds,
    webhooks,
    webhookQueue,
    webhookWrites,
    metrics,
    syncQueue,
    tickQueue,
    syncDeps,
  };
}

/** What the demo reads to follow its accounts' syncs (store/sync-progress.ts), over the shared pool. */
export function openSyncProgress(clients: Pick<Clients, 'prisma'>): SyncProgressStore {
  return createSyncProgressStore(clients.prisma);
}

/** Readiness's own Postgres connection (see postgres-probe.ts), closed with the process. */
export function openPostgresProbe(clients: Pick<Clients, 'pgSessions'>, releasers: Releasers): PostgresProbe {
  const probe = createPostgresProbe(clients.pgSessions);
  releasers.add('readiness probe', () => probe.close());
  return probe;
}

/** The web role's listener for feed change notices, on a session of its own; resolves once it has tried. */
export async function openFeedChanges(
  clients: Pick<Clients, 'pgSessions'>,
  releasers: Releasers,
  logger: Logger,
): Promise<FeedChangeListener> {
  const feedChanges = await startFeedChangeListener({ sessions: clients.pgSessions, logger });
  releasers.add('feed change listener', () => feedChanges.close());
  return feedChanges;
}

/** What the web role runs on besides the shared clients and services: opened by startRoles (or a test). */
export interface WebParts {
  postgresProbe: PostgresProbe;
  feedChanges: FeedChangeListener;
  roleReadiness: Record<string, ReadinessCheck>;
  /** Scoped to the web role. */
  logger: Logger;
}

/** Everything the web role is given (web/web-deps.ts), from the shared clients and services. */
export function composeWebDeps(
  config: DaemonConfig,
  clients: Clients,
  services: Services,
  parts: WebParts,
  clock: Clock = systemClock,
): WebDeps {
  return {
    settings: {
      ...config.web,
      refreshIntervalSeconds: config.sync.intervalSeconds,
      syncBands: config.sync.bands,
      redisPrefix: config.redis.prefix,
    },
    redis: clients.redis,
    postgresProbe: parts.postgresProbe,
    roleReadiness: parts.roleReadiness,
    connections: services.connections,
    connectionAdmin: createConnectionAdminStore(clients.prisma, services.feeds),
    connectionDetail: createConnectionDetailStore(clients.prisma),
    feeds: services.feeds,
    feedNames: createFeedNameStore(clients.prisma),
    teams: createTeamStore(clients.prisma),
    feedContent: createFeedContentStore(clients.prisma),
    eventRevisions: createEventRevisionStore(clients.prisma),
    apiKeys: createApiKeyStore(clients.prisma),
    webhooks: services.webhooks,
    reports: createReportStore(clients.prisma),
    feedChanges: parts.feedChanges,
    ...createUpstreamClients(config.upstream, clock, countUpstreamCall(services.metrics)),
    syncQueue: services.syncQueue,
    tickQueue: services.tickQueue,
    enqueueSync: async (ids) => void (await enqueueSyncs(services.syncQueue, ids, config.sync.maxAttempts)),
    metrics: services.metrics,
    logger: parts.logger,
    now: clock.now,
  };
}

/** Starts the requested roles in this process and registers their shutdown. */
/** What one scheduler tick needs (enqueueDueSyncs): the scheduler role's, and tests' that tick by hand. */
export function tickDeps(config: DaemonConfig, clients: Clients, services: Services, clock: Clock): TickDeps {
  return {
    connections: services.connections,
    syncQueue: services.syncQueue,
    maxAttempts: config.sync.maxAttempts,
    bands: config.sync.bands,
    horizonDays: config.sync.horizonDays,
    budget: createRedisCallBudget(
      clients.redis,
      `${config.redis.prefix}:sync-call-budget`,
      config.sync.callBudgetPerSecond,
    ),
    now: clock.now,
    logger: clients.logger.child({ role: 'scheduler' }),
    metrics: services.metrics,
  };
}

export async function startRoles(
  roles: readonly Role[],
  config: DaemonConfig,
  clients: Clients,
  services: Services,
  releasers: Releasers,
  clock: Clock = systemClock,
): Promise<void> {
  if (config.sync.bandsBeyondHorizon.length > 0) {
    clients.logger.warn(
      { bands: config.sync.bandsBeyondHorizon, horizonDays: config.sync.horizonDays },
      'SYNC_BANDS has bands that start beyond SYNC_HORIZON_DAYS: they are left out',
    );
  }
  if (roles.includes('worker')) {
    const worker = startSyncWorker(
      services.syncDeps,
      services.syncQueue,
      {
        connection: clients.bullRedis,
        prefix: config.redis.prefix,
        concurrency: config.sync.workerConcurrency,
        lockSeconds: config.sync.workerLockSeconds,
        shutdownGraceSeconds: config.sync.shutdownGraceSeconds,
        errors: clients.errors,
      },
      clients.logger.child({ role: 'worker' }),
    );
    releasers.add('sync worker', () => worker.close());
    await worker.worker.waitUntilReady();
    const webhookWorker = startWebhookWorker({
      queue: services.webhookQueue,
      queueConnection: clients.redis,
      connection: clients.bullRedis,
      prefix: config.redis.prefix,
      concurrency: config.webhooks.concurrency,
      lockSeconds: config.sync.workerLockSeconds,
      dispatchIntervalMs: config.webhooks.dispatchIntervalMs,
      sweepIntervalSeconds: config.webhooks.sweepIntervalSeconds,
      ...(clock.every ? { every: clock.every } : {}),
      retry: { maxAttempts: config.webhooks.maxAttempts, retryBaseMs: config.webhooks.retryBaseMs },
      delivery: {
        deliveries: createWebhookDeliveryStore(clients.prisma),
        secretOf: (endpointId) => services.webhooks.secretOf(endpointId),
        now: clock.now,
        settings: {
          timeoutMs: config.webhooks.timeoutMs,
          allowPrivateTargets: config.webhooks.allowPrivateTargets,
          disableAfterSeconds: config.webhooks.disableAfterSeconds,
        },
      },
      metrics: services.metrics,
      errors: clients.errors,
      logger: clients.logger.child({ role: 'webhooks' }),
    });
    const stopListening = services.webhookWrites.on(() => webhookWorker.kick());
    releasers.add('webhook worker', async () => {
      stopListening();
      await webhookWorker.close();
    });
  }
  const serveHealth = roles.includes('web') || config.sync.healthPort !== undefined;
  const postgresProbe = serveHealth ? openPostgresProbe(clients, releasers) : undefined;
  const roleReadiness: Record<string, ReadinessCheck> = {};
  if (postgresProbe && roles.includes('worker')) {
    roleReadiness.worker = workerReadiness(postgresProbe, clients.redis);
  }
  if (postgresProbe && roles.includes('scheduler')) {
    roleReadiness.scheduler = schedulerReadiness(postgresProbe, clients.redis, () =>
      tickIsScheduled(services.tickQueue),
    );
  }
  if (roles.includes('web') && postgresProbe) {
    const logger = clients.logger.child({ role: 'web' });
    const feedChanges = await openFeedChanges(clients, releasers, logger);
    // Loaded only where the web role runs: its modules (fastify plugins, the API's schemas and reference page,
    // the feed renderers) are ~35 MiB a worker or scheduler process would carry for nothing.
    const { startWeb } = await import('./web/app.js');
    const web = await startWeb(
      composeWebDeps(config, clients, services, { postgresProbe, feedChanges, roleReadiness, logger }, clock),
    );
    releasers.add('web', () => web.close());
    clients.logger.info({ url: web.url }, 'web server listening');
  }
  if (roles.includes('scheduler')) {
    registerStateGauges(services.metrics.registry, {
      async connectionsByStatus() {
        const rows = await clients.prisma.connection.groupBy({ by: ['status'], _count: { _all: true } });
        return Object.fromEntries(
          CONNECTION_STATUSES.map((status) => [
            status,
            rows.find((r) => r.status === status)?._count._all ?? 0,
          ]),
        );
      },
      async queueJobs() {
        const states = ['waiting', 'delayed', 'active', 'failed'] as const;
        const queues = [services.syncQueue, services.webhookQueue];
        const counts = await Promise.all(queues.map((queue) => queue.getJobCounts(...states)));
        return queues.flatMap((queue, i) =>
          states.map((state) => ({ queue: queue.name, state, count: counts[i]?.[state] ?? 0 })),
        );
      },
    });
    const retention = startRetention({
      retention: createRetentionStore(clients.prisma),
      redis: clients.redis,
      prefix: config.redis.prefix,
      settings: config.sync.retention,
      now: clock.now,
      logger: clients.logger.child({ role: 'retention' }),
    });
    releasers.add('retention', () => retention.close());
    const scheduler = await startScheduler({
      ...tickDeps(config, clients, services, clock),
      tickQueue: services.tickQueue,
      connection: clients.bullRedis,
      queueConnection: clients.redis,
      prefix: config.redis.prefix,
      tickSeconds: config.sync.tickSeconds,
      errors: clients.errors,
      ...(clock.every ? { every: clock.every } : {}),
    });
    releasers.add('scheduler', () => scheduler.close());
  }
  if (!roles.includes('web') && postgresProbe && config.sync.healthPort !== undefined) {
    const health = await startHealthServer({
      host: config.web.host,
      port: config.sync.healthPort,
      readiness: { checks: roleReadiness, primary: Object.keys(roleReadiness) },
      metrics: services.metrics,
      logger: clients.logger.child({ role: 'health' }),
    });
    releasers.add('health server', () => health.close());
    clients.logger.info({ url: health.url }, 'health server listening');
  }
}
