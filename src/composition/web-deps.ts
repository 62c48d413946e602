// Everything the web role is given (web/web-deps.ts), from the shared clients and services.
import type { Logger } from '../log.js';
import type { ReadinessCheck } from '../lib/readiness.js';
import { createApiKeyStore } from '../store/api-keys.js';
import { createConnectionAdminStore } from '../store/connection-admin.js';
import { createConnectionDetailStore } from '../store/connection-detail.js';
import { createEventRevisionStore } from '../store/event-revisions.js';
import type { FeedChangeListener } from '../store/feed-change-listener.js';
import { createFeedContentStore } from '../store/feed-content.js';
import { createFeedNameStore } from '../store/feed-names.js';
import type { PostgresProbe } from '../store/postgres-probe.js';
import { createReportStore } from '../store/reports.js';
import { createTeamStore } from '../store/teams.js';
import { enqueueSyncs } from '../sync/queues.js';
import type { WebDeps } from '../web/web-deps.js';
import type { Clients } from './clients.js';
import { systemClock, type Clock } from './clock.js';
import type { DaemonConfig } from './daemon-config.js';
import type { Services } from './services.js';
import { countUpstreamCall, createUpstreamClients } from './upstream-clients.js';

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
