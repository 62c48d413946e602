// What the CLI's commands over stored data open: a pool and the stores over it, for `slotfeed sync` the sync
// queue on a fail-fast connection of its own, and for `slotfeed destinations` the CalDAV destinations service.
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { openCalDavAccount } from '../caldav/index.js';
import {
  createCaldavDestinations,
  type CaldavDestinations,
} from '../destinations/caldav-destinations-service.js';
import { closeRedisClient } from '../lib/redis-close.js';
import { createRedisConnection, redisTargetOf, type RedisClient } from '../lib/redis-connection.js';
import type { Releasers } from '../lib/releasers.js';
import { createApiKeyStore } from '../store/api-keys.js';
import { createCaldavCleanupStore } from '../store/caldav-cleanups.js';
import { createCaldavDestinationStore } from '../store/caldav-destinations.js';
import { createConnectionAdminStore } from '../store/connection-admin.js';
import { createFeedNameStore } from '../store/feed-names.js';
import { createFeedStore } from '../store/feeds.js';
import { createReportStore } from '../store/reports.js';
import { createTeamStore } from '../store/teams.js';
import { createShareLinkStore } from '../store/share-links.js';
import { createWebhookStore } from '../store/webhooks.js';
import { createSyncQueueShards, type SyncJobData } from '../sync/queues.js';
import { closeQueueShards, type QueueShards } from '../lib/queue-shards.js';
import { openDatabase } from './clients.js';
import { tokenVaultFor, type Stores } from './stores.js';

/** The stores a command works through: the operator's view of connections, feeds, teams, keys, webhooks, reports. */
export type CommandStores = Pick<
  Stores,
  'connectionAdmin' | 'feeds' | 'feedNames' | 'teams' | 'apiKeys' | 'shareLinks' | 'webhooks' | 'reports'
>;

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
  const prisma = openDatabase(config.database.url, releasers, {
    preparedStatements: config.database.preparedStatements,
  });
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
    shareLinks: createShareLinkStore(prisma, vault),
    webhooks: createWebhookStore(prisma, vault, {
      allowPrivateTargets: config.webhooks?.allowPrivateTargets ?? false,
    }),
    reports: createReportStore(prisma),
  };
}

/**
 * `slotfeed sync`'s clients besides the database: the sync queue, to add jobs and read their state, on one
 * fail-fast connection. No worker runs in that process, and a command must report a Redis outage, not wait
 * it out; the command's own calls fail with it, so the connection's and queue's error events add nothing.
 */
export function openSyncQueue(
  config: Pick<Config, 'redis'>,
  releasers: Releasers,
): { redis: RedisClient; syncQueue: QueueShards<SyncJobData> } {
  const redis = createRedisConnection(redisTargetOf(config.redis), 'command', 'slotfeed-cli');
  releasers.add('redis', () => closeRedisClient(redis));
  const quiet = { report: () => undefined, recovered: () => undefined };
  const syncQueue = createSyncQueueShards(
    { connection: redis, prefix: config.redis.prefix, errors: quiet },
    config.redis.shards,
  );
  releasers.add('sync queue', () => closeQueueShards(syncQueue));
  return { redis, syncQueue };
}

/**
 * `slotfeed destinations`: the CalDAV destinations service over a pool of its own, with the token vault (the
 * passwords are sealed) and the daemon's target policy (CALDAV_ALLOW_PRIVATE_TARGETS). It queues nothing: what
 * a command asks for (a new destination, a push or reconciliation, a resume, new credentials) is due in
 * Postgres, and the workers' dispatcher queues it within CALDAV_DISPATCH_INTERVAL_MS, so the command needs no
 * Redis.
 */
export function openCommandDestinations(
  config: Pick<Config, 'database' | 'vault' | 'caldav'>,
  releasers: Releasers,
  logger: Logger,
): CaldavDestinations {
  const prisma = openDatabase(config.database.url, releasers, {
    preparedStatements: config.database.preparedStatements,
  });
  const vault = tokenVaultFor(config.vault);
  return createCaldavDestinations({
    destinations: createCaldavDestinationStore(prisma, vault),
    cleanups: createCaldavCleanupStore(prisma, vault),
    feeds: createFeedStore(prisma, logger, vault),
    openAccount: (target) =>
      openCalDavAccount({
        ...target,
        allowPrivateTargets: config.caldav.allowPrivateTargets,
        timeoutMs: config.caldav.timeoutSeconds * 1000,
      }),
    enqueue: async () => undefined,
    enqueueCleanup: async () => undefined,
    now: () => new Date(),
  });
}
