// The shared clients, opened once per process: Prisma pools, Redis connections, the queues, the Postgres
// sessions outside the pools, the error log and metrics. Nothing else in slotfeed constructs one; each registers
// how to close itself as it opens, so a process releases them newest first.
import type { Queue } from 'bullmq';
import type { RedisClient } from '../lib/redis-connection.js';
import pg from 'pg';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Logger } from '../log.js';
import { createCaldavQueueShards, type CaldavJobData } from '../destinations/caldav-queue.js';
import { createMetrics, type Metrics } from '../lib/metrics.js';
import { closeQueueShards, type QueueShards } from '../lib/queue-shards.js';
import { closeRedisClient } from '../lib/redis-close.js';
import { createRedisConnection, redisTargetOf } from '../lib/redis-connection.js';
import type { Releasers } from '../lib/releasers.js';
import { createRepeatedErrorLog, type RepeatedErrorLog } from '../lib/repeated-errors.js';
import { startFeedChangeListener, type FeedChangeListener } from '../store/feed-change-listener.js';
import type { PgSessions } from '../store/pg-sessions.js';
import { createPostgresProbe, type PostgresProbe } from '../store/postgres-probe.js';
import { createPrismaClient, type PoolSettings } from '../store/prisma-client.js';
import { createSyncQueueShards, createTickQueue, type SyncJobData } from '../sync/queues.js';
import { createWebhookQueueShards, type WebhookJobData } from '../webhooks/webhook-queue.js';
import type { DaemonConfig } from './daemon-config.js';

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
  /** The queues, to produce jobs and read their state (the workers have connections of their own). The
   *  per-connection ones are sharded over REDIS_SHARDS hash tags (lib/queue-shards.ts); the tick is one. */
  syncShards: QueueShards<SyncJobData>;
  tickQueue: Queue;
  webhookShards: QueueShards<WebhookJobData>;
  caldavShards: QueueShards<CaldavJobData>;
  /** Shard 0 of each: the whole queue when REDIS_SHARDS is 1 (as tests run), the jobs queued before it was
   *  raised otherwise. Code that produces or counts takes the shards. */
  syncQueue: Queue<SyncJobData>;
  webhookQueue: Queue<WebhookJobData>;
  caldavQueue: Queue<CaldavJobData>;
}

/** The per-connection queues, each with all its shards. */
export function shardedQueues(
  clients: Pick<Clients, 'syncShards' | 'webhookShards' | 'caldavShards'>,
): QueueShards<unknown>[] {
  return [clients.syncShards, clients.webhookShards, clients.caldavShards] as QueueShards<unknown>[];
}

/** Every queue slotfeed has, every shard of each, for the places that must show or count them all (the queue
 *  dashboard). */
export function everyQueue(
  clients: Pick<Clients, 'syncShards' | 'tickQueue' | 'webhookShards' | 'caldavShards'>,
): Queue[] {
  return [
    ...clients.syncShards.shards,
    clients.tickQueue,
    ...clients.webhookShards.shards,
    ...clients.caldavShards.shards,
  ] as Queue[];
}

/** A Prisma pool on `databaseUrl`, disconnected with the process. */
export function openDatabase(
  databaseUrl: string,
  releasers: Releasers,
  settings: PoolSettings = {},
  name = 'postgres',
): PrismaClient {
  const prisma = createPrismaClient(databaseUrl, settings);
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

/** Opens the shared clients and registers how to close them, newest first. */
export function openClients(config: DaemonConfig, releasers: Releasers, logger: Logger): Clients {
  const prisma = openDatabase(config.database.url, releasers, config.database);
  // Opens no connection until a worker uses it.
  const syncPrisma = openDatabase(
    config.database.url,
    releasers,
    { ...config.sync.database, preparedStatements: config.database.preparedStatements },
    'postgres (sync)',
  );
  const metrics = createMetrics();
  const errors = createRepeatedErrorLog(logger, { onReport: (source) => metrics.errors.inc({ source }) });
  const redis = createRedisConnection(redisTargetOf(config.redis), 'command', 'slotfeed', errors);
  releasers.add('redis', () => closeRedisClient(redis));
  const bullRedis = createRedisConnection(redisTargetOf(config.redis), 'blocking', 'slotfeed-bullmq', errors);
  releasers.add('redis (bullmq)', () => closeRedisClient(bullRedis));
  const pgSessions = pgSessionsFor(config.database.url);
  // Queues only produce here (workers have connections of their own), so they take the fail-fast connection,
  // as BullMQ advises for producers: an admin action or `slotfeed sync` fails instead of waiting for Redis.
  const queueSettings = { connection: redis, prefix: config.redis.prefix, errors };
  const shards = config.redis.shards;
  const syncShards = createSyncQueueShards(queueSettings, shards);
  releasers.add('sync queue', () => closeQueueShards(syncShards));
  const tickQueue = createTickQueue(queueSettings);
  releasers.add('tick queue', () => tickQueue.close());
  const webhookShards = createWebhookQueueShards(queueSettings, shards);
  releasers.add('webhook queue', () => closeQueueShards(webhookShards));
  const caldavShards = createCaldavQueueShards(queueSettings, shards);
  releasers.add('caldav queue', () => closeQueueShards(caldavShards));
  return {
    logger,
    prisma,
    syncPrisma,
    redis,
    bullRedis,
    errors,
    metrics,
    pgSessions,
    syncShards,
    tickQueue,
    webhookShards,
    caldavShards,
    syncQueue: syncShards.shards[0]!,
    webhookQueue: webhookShards.shards[0]!,
    caldavQueue: caldavShards.shards[0]!,
  };
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
