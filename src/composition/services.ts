// The services over the clients and stores: the sync pipeline's dependencies (the worker runs it), what a
// scheduler tick needs, and the signal by which a commit tells the webhook dispatcher to look.
import { createRedisRateLimiter } from '../lib/redis-rate-limiter.js';
import { createSignal, type Signal } from '../lib/signal.js';
import { createRedisCallBudget } from '../sync/call-budget.js';
import type { TickDeps } from '../sync/scheduler.js';
import type { SyncDeps } from '../sync/sync-connection.js';
import type { Clients } from './clients.js';
import { systemClock, type Clock } from './clock.js';
import type { DaemonConfig } from './daemon-config.js';
import type { Stores } from './stores.js';
import { countUpstreamCall, createUpstreamClients } from './upstream-clients.js';

export interface Services {
  /** What a sync of one connection runs on (sync/sync-connection.ts): the worker's, and tests'. */
  syncDeps: SyncDeps;
  /** What one scheduler tick needs (enqueueDueSyncs): the scheduler role's, and tests' that tick by hand. */
  tickDeps: TickDeps;
  /** Raised when a commit in this process wrote webhook deliveries. */
  webhookWrites: Signal;
}

export function composeServices(
  config: DaemonConfig,
  clients: Clients,
  stores: Pick<Stores, 'connections' | 'syncConnections' | 'snapshots'>,
  clock: Clock = systemClock,
): Services {
  const { metrics } = clients;
  const prefix = config.redis.prefix;
  const webhookWrites = createSignal();
  const limiter = createRedisRateLimiter(clients.redis, `${prefix}:upstream-rate`, config.sync.rateLimit);
  const upstream = config.upstream;

  const syncDeps: SyncDeps = {
    snapshots: stores.snapshots,
    connections: stores.syncConnections,
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
      accountIntervalSeconds: config.sync.accountIntervalSeconds,
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
    // The worker role's dispatcher listens (roles/worker-role.ts); a process without it leaves them to the
    // dispatcher's interval.
    onWebhookDeliveries: () => webhookWrites.notify(),
  };
  const tickDeps: TickDeps = {
    connections: stores.connections,
    syncQueue: clients.syncQueue,
    maxAttempts: config.sync.maxAttempts,
    bands: config.sync.bands,
    horizonDays: config.sync.horizonDays,
    accountIntervalSeconds: config.sync.accountIntervalSeconds,
    budget: createRedisCallBudget(
      clients.redis,
      `${prefix}:sync-call-budget`,
      config.sync.callBudgetPerSecond,
    ),
    now: clock.now,
    logger: clients.logger.child({ role: 'scheduler' }),
    metrics,
  };
  return { syncDeps, tickDeps, webhookWrites };
}
