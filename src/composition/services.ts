// The services over the shared clients: the queues, the sync pipeline's dependencies, and what a scheduler
// tick needs.
import type { Queue } from 'bullmq';
import type { Metrics } from '../lib/metrics.js';
import { createRedisRateLimiter } from '../lib/redis-rate-limiter.js';
import type { Releasers } from '../lib/releasers.js';
import { createSignal, type Signal } from '../lib/signal.js';
import { createConnectionStore, type ConnectionStore } from '../store/connections.js';
import { createFeedStore, type FeedStore } from '../store/feeds.js';
import { createSnapshotStore } from '../store/snapshot-store.js';
import { createSyncProgressStore, type SyncProgressStore } from '../store/sync-progress.js';
import { createWebhookStore, type WebhookStore } from '../store/webhooks.js';
import { createRedisCallBudget } from '../sync/call-budget.js';
import { createSyncQueue, createTickQueue, type SyncJobData } from '../sync/queues.js';
import type { TickDeps } from '../sync/scheduler.js';
import type { SyncDeps } from '../sync/sync-connection.js';
import { createWebhookQueue, type WebhookJobData } from '../webhooks/webhook-queue.js';
import type { Clients } from './clients.js';
import { systemClock, type Clock } from './clock.js';
import type { DaemonConfig } from './daemon-config.js';
import { tokenVaultFor } from './stores.js';
import { countUpstreamCall, createUpstreamClients } from './upstream-clients.js';

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
