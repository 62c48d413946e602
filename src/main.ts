// The composition root: config → logger → shared clients → services → what a command runs. Nothing else in
// slotfeed constructs a logger, a Prisma client or a Redis connection; everything below receives them.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { loadConfig, type Config } from './config.js';
import type { PrismaClient } from './generated/prisma/client.js';
import { createLogger, type Logger } from './log.js';
import { createRedisConnection } from './lib/redis-connection.js';
import { createRedisRateLimiter } from './lib/redis-rate-limiter.js';
import { Releasers } from './lib/releasers.js';
import { createConnectionStore, type ConnectionStore } from './store/connections.js';
import {
  applyPendingMigrations,
  markMigrationRolledBack,
  migrationStatus,
} from './store/migrations/index.js';
import { createPrismaClient } from './store/prisma-client.js';
import { createTokenVault, vaultKeyFromBase64 } from './store/token-vault.js';
import { startSimulator, formatSimulatorBanner, type SimulatorOptions } from './simulator/index.js';
import { createSyncQueue, createTickQueue, enqueueSyncs, type SyncJobData } from './sync/queues.js';
import { followJobs } from './sync/follow-jobs.js';
import { startScheduler } from './sync/scheduler.js';
import type { SyncDeps } from './sync/sync-connection.js';
import { startSyncWorker } from './sync/sync-worker.js';
import { createApiClient, createOAuthClient } from './upstream/index.js';

type Env = Record<string, string | undefined>;

/** prisma/migrations, found from this file whether it runs from src/ (tests) or dist/ (the built CLI). */
export const MIGRATIONS_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'prisma',
  'migrations',
);

export interface Output {
  write(text: string): void;
}

function loggerFor(env: Env): Logger {
  const { log } = loadConfig(env, ['log']);
  return createLogger({ level: log.level });
}

/**
 * `slotfeed migrate`: applies pending migrations; with `status`, only reports them; with `rolledBack`, marks a
 * failed migration as rolled back (as `prisma migrate resolve --rolled-back` does) so it can be applied again.
 */
export async function runMigrate(
  env: Env,
  options: { status: boolean; rolledBack?: string },
  out: Output,
): Promise<void> {
  const config = loadConfig(env, ['database', 'log']);
  const logger = createLogger({ level: config.log.level });
  const runner = { databaseUrl: config.database.url, migrationsDir: MIGRATIONS_DIR, logger };
  if (options.rolledBack) {
    await markMigrationRolledBack(runner, options.rolledBack);
    out.write(`Marked ${options.rolledBack} as rolled back; fix it and run \`slotfeed migrate\` again.\n`);
    return;
  }
  if (options.status) {
    const status = await migrationStatus(runner);
    out.write(
      [
        `applied: ${status.applied.length}`,
        ...status.pending.map((name) => `pending: ${name}`),
        ...status.modified.map((name) => `modified after it was applied: ${name}`),
        ...status.failed.map((name) => `failed: ${name}`),
        ...status.missingLocally.map((name) => `applied but missing from prisma/migrations: ${name}`),
      ].join('\n') + '\n',
    );
    return;
  }
  const result = await applyPendingMigrations(runner);
  out.write(
    result.applied.length === 0
      ? `Database is up to date (${result.alreadyApplied.length} migrations applied earlier).\n`
      : `Applied ${result.applied.length} migration(s):\n${result.applied.map((n) => `  ${n}\n`).join('')}`,
  );
}

/**
 * `slotfeed simulator`: the scheduling service's stand-in, until SIGINT/SIGTERM. Resolves once it is shut
 * down; the returned promise is what keeps the process alive.
 */
export async function runSimulator(env: Env, options: SimulatorOptions, out: Output): Promise<void> {
  const logger = loggerFor(env).child({ role: 'simulator' });
  const releasers = new Releasers();
  const simulator = await startSimulator({ ...options, logger });
  releasers.add('simulator', () => simulator.close());
  out.write(formatSimulatorBanner(simulator) + '\n');
  await untilShutdownSignal(logger);
  await releasers.releaseAll(logger);
}

/**
 * Resolves on the first SIGINT or SIGTERM so the caller can shut down in order; a second signal means the
 * operator will not wait, so the process exits at once.
 */
export function untilShutdownSignal(logger: Logger): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let received: NodeJS.Signals | undefined;
    const onSignal = (signal: NodeJS.Signals) => {
      if (received) {
        logger.warn({ signal }, 'second signal: exiting without finishing shutdown');
        process.exit(130);
      }
      received = signal;
      logger.info({ signal }, 'shutting down (send the signal again to force)');
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

// --- the daemon's roles -----------------------------------------------------------------------------------

export type DaemonConfig = Pick<Config, 'database' | 'redis' | 'log' | 'upstream' | 'vault' | 'sync'>;
export type Role = 'scheduler' | 'worker';

export interface Clients {
  logger: Logger;
  prisma: PrismaClient;
  /** For commands (locks, rate limit, queue producers); fails fast when Redis is down. */
  redis: Redis;
  /** For BullMQ workers, which block on Redis and must never give up on a command. */
  bullRedis: Redis;
}

/** Opens the shared clients and registers how to close them, newest first. */
export function openClients(config: DaemonConfig, releasers: Releasers, logger: Logger): Clients {
  const prisma = createPrismaClient(config.database.url);
  releasers.add('postgres', () => prisma.$disconnect());
  const redis = createRedisConnection(config.redis.url, 'command', 'slotfeed');
  releasers.add('redis', async () => void (await redis.quit()));
  const bullRedis = createRedisConnection(config.redis.url, 'blocking', 'slotfeed-bullmq');
  releasers.add('redis (bullmq)', async () => void (await bullRedis.quit()));
  return { logger, prisma, redis, bullRedis };
}

export interface Services {
  connections: ConnectionStore;
  syncQueue: Queue<SyncJobData>;
  tickQueue: Queue;
  syncDeps: SyncDeps;
}

export interface Clock {
  now: () => Date;
  random: () => number;
}

const systemClock: Clock = { now: () => new Date(), random: Math.random };

export function composeServices(
  config: DaemonConfig,
  clients: Clients,
  releasers: Releasers,
  clock: Clock = systemClock,
): Services {
  const vault = createTokenVault(
    vaultKeyFromBase64(config.vault.currentKey),
    config.vault.previousKeys.map(vaultKeyFromBase64),
  );
  const connections = createConnectionStore(clients.prisma, vault);
  const prefix = config.redis.prefix;
  const queueSettings = { connection: clients.bullRedis, prefix };
  const syncQueue = createSyncQueue(queueSettings);
  releasers.add('sync queue', () => syncQueue.close());
  const tickQueue = createTickQueue(queueSettings);
  releasers.add('tick queue', () => tickQueue.close());
  const limiter = createRedisRateLimiter(clients.redis, `${prefix}:upstream-rate`, config.sync.rateLimit);
  const upstream = config.upstream;

  const syncDeps: SyncDeps = {
    prisma: clients.prisma,
    connections,
    redis: clients.redis,
    keyPrefix: prefix,
    limiter,
    upstreamFor: ({ signal, onCall }) => {
      const api = createApiClient({
        baseUrl: upstream.baseUrl,
        timeoutMs: upstream.timeoutMs,
        slotsQuery: upstream.slotsQuery,
        now: clock.now,
        ...(signal ? { signal } : {}),
        onCall: (endpoint) => onCall(endpoint),
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
        onCall: (endpoint) => onCall(endpoint),
      });
      // The token endpoint counts against the same per-client upstream limit as the API.
      return {
        api,
        oauth: {
          refresh: async (refreshToken: string) => {
            await limiter.acquire(signal);
            return oauth.refresh(refreshToken);
          },
        },
      };
    },
    settings: {
      horizonDays: config.sync.horizonDays,
      overviewWindowDays: config.sync.overviewWindowDays,
      fetchConcurrency: config.sync.fetchConcurrency,
      intervalSeconds: config.sync.intervalSeconds,
      jitterRatio: config.sync.jitterRatio,
      tokenRefreshMarginSeconds: config.sync.tokenRefreshMarginSeconds,
      backoffMs: config.sync.backoffMs,
    },
    now: clock.now,
    random: clock.random,
    logger: clients.logger,
  };
  return { connections, syncQueue, tickQueue, syncDeps };
}

/** Starts the requested roles in this process and registers their shutdown. */
export async function startRoles(
  roles: readonly Role[],
  config: DaemonConfig,
  clients: Clients,
  services: Services,
  releasers: Releasers,
  clock: Clock = systemClock,
): Promise<void> {
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
      },
      clients.logger.child({ role: 'worker' }),
    );
    releasers.add('sync worker', () => worker.close());
    await worker.worker.waitUntilReady();
  }
  if (roles.includes('scheduler')) {
    const scheduler = await startScheduler({
      connections: services.connections,
      syncQueue: services.syncQueue,
      tickQueue: services.tickQueue,
      connection: clients.bullRedis,
      prefix: config.redis.prefix,
      tickSeconds: config.sync.tickSeconds,
      maxAttempts: config.sync.maxAttempts,
      now: clock.now,
      logger: clients.logger.child({ role: 'scheduler' }),
    });
    releasers.add('scheduler', () => scheduler.close());
  }
}

const DAEMON_SECTIONS = ['database', 'redis', 'log', 'upstream', 'vault', 'sync'] as const;

/** `slotfeed start | worker | scheduler`: runs the roles until SIGINT/SIGTERM, then shuts down in order. */
export async function runDaemon(env: Env, roles: readonly Role[]): Promise<void> {
  const config = loadConfig(env, DAEMON_SECTIONS);
  const logger = createLogger({ level: config.log.level });
  const releasers = new Releasers();
  try {
    const clients = openClients(config, releasers, logger);
    const services = composeServices(config, clients, releasers);
    await startRoles(roles, config, clients, services, releasers);
    logger.info({ roles }, 'slotfeed running');
    await untilShutdownSignal(logger);
  } finally {
    await releasers.releaseAll(logger);
  }
}

/** `slotfeed sync`: enqueues syncs now (deduplicated like the scheduler's) and, with `wait`, follows them. */
export async function runSync(
  env: Env,
  request: { connectionIds: string[]; all: boolean; wait: boolean; timeoutSeconds: number },
  out: Output & { isTTY: boolean },
): Promise<{ failed: number }> {
  const config = loadConfig(env, DAEMON_SECTIONS);
  const logger = createLogger({ level: config.log.level });
  const releasers = new Releasers();
  try {
    const clients = openClients(config, releasers, logger);
    const services = composeServices(config, clients, releasers);
    const ids = request.all ? await services.connections.listActiveIds() : request.connectionIds;
    for (const id of request.all ? [] : ids) await services.connections.get(id);
    const jobs = await enqueueSyncs(services.syncQueue, ids, config.sync.maxAttempts);
    out.write(`Enqueued ${jobs.length} sync job(s).\n`);
    if (!request.wait || jobs.length === 0) return { failed: 0 };
    if ((await services.syncQueue.getWorkers()).length === 0) {
      out.write('No worker is running: start one with `slotfeed worker` (or `slotfeed start`).\n');
    }
    const outcome = await followJobs(services.syncQueue, jobs, {
      timeoutMs: request.timeoutSeconds * 1000,
      out,
    });
    return { failed: outcome.failed + outcome.unfinished };
  } finally {
    await releasers.releaseAll(logger);
  }
}
