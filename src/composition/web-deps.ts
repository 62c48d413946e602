// Everything the web role is given (web/web-deps.ts), from the shared clients, the stores and the services.
import type { Logger } from '../log.js';
import type { ReadinessCheck } from '../lib/readiness.js';
import type { FeedChangeListener } from '../store/feed-change-listener.js';
import type { PostgresProbe } from '../store/postgres-probe.js';
import { enqueueSyncs } from '../sync/queues.js';
import type { WebDeps } from '../web/web-deps.js';
import { everyQueue, type Clients } from './clients.js';
import { systemClock, type Clock } from './clock.js';
import type { DaemonConfig } from './daemon-config.js';
import type { Services } from './services.js';
import type { Stores } from './stores.js';
import { countUpstreamCall, createUpstreamClients } from './upstream-clients.js';

/** What the web role runs on besides the shared clients and stores: opened by its role (or a test). */
export interface WebParts {
  postgresProbe: PostgresProbe;
  feedChanges: FeedChangeListener;
  /** The readiness of the other roles this process runs, served beside the web role's own. */
  roleReadiness: Record<string, ReadinessCheck>;
  /** Scoped to the web role. */
  logger: Logger;
}

export function composeWebDeps(
  config: DaemonConfig,
  clients: Clients,
  stores: Stores,
  services: Pick<Services, 'caldavDestinations'>,
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
    connections: stores.connections,
    connectionAdmin: stores.connectionAdmin,
    connectionDetail: stores.connectionDetail,
    feeds: stores.feeds,
    feedNames: stores.feedNames,
    teams: stores.teams,
    feedContent: stores.feedContent,
    eventRevisions: stores.eventRevisions,
    apiKeys: stores.apiKeys,
    shareLinks: stores.shareLinks,
    webhooks: stores.webhooks,
    caldavDestinations: services.caldavDestinations,
    reports: stores.reports,
    feedChanges: parts.feedChanges,
    ...createUpstreamClients(config.upstream, clock, countUpstreamCall(clients.metrics)),
    syncQueue: clients.syncQueue,
    tickQueue: clients.tickQueue,
    webhookQueue: clients.webhookQueue,
    dashboardQueues: everyQueue(clients),
    enqueueSync: async (ids) => void (await enqueueSyncs(clients.syncShards, ids, config.sync.maxAttempts)),
    metrics: clients.metrics,
    logger: parts.logger,
    now: clock.now,
  };
}
