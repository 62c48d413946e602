// What the web role is given by the composition root. Everything arrives here; nothing in src/web constructs
// a client of its own, and Postgres is reached only through the stores' named methods.
import type { Queue } from 'bullmq';
import type { RedisClient } from '../lib/redis-connection.js';
import type { Config } from '../config.js';
import type { CaldavDestinations } from '../destinations/caldav-destinations-service.js';
import type { Metrics } from '../lib/metrics.js';
import type { ReadinessCheck } from '../lib/readiness.js';
import type { Logger } from '../log.js';
import type { ApiKeyStore } from '../store/api-keys.js';
import type { WebhookStore } from '../store/webhooks.js';
import type { ShareLinkStore } from '../store/share-links.js';
import type { ConnectionAdminStore } from '../store/connection-admin.js';
import type { ConnectionDetailStore } from '../store/connection-detail.js';
import type { ConnectionStore } from '../store/connections.js';
import type { EventRevisionStore } from '../store/event-revisions.js';
import type { FeedChangeListener } from '../store/feed-change-listener.js';
import type { FeedContentStore } from '../store/feed-content.js';
import type { FeedNameStore } from '../store/feed-names.js';
import type { FeedStore } from '../store/feeds.js';
import type { PostgresProbe } from '../store/postgres-probe.js';
import type { ReportStore } from '../store/reports.js';
import type { TeamStore } from '../store/teams.js';
import type { CadenceBand } from '../config/sync-bands.js';
import type { SyncJobData } from '../sync/queues.js';
import type { ApiClient, OAuthClient } from '../upstream/index.js';
import type { WebhookJobData } from '../webhooks/webhook-jobs.js';

export type WebSettings = Config['web'] & {
  /** The nearest band's interval: feeds advertise it as their refresh interval. */
  refreshIntervalSeconds: number;
  /** SYNC_BANDS: the admin's connection page shows when each is next due. */
  syncBands: readonly CadenceBand[];
  /** REDIS_PREFIX: OAuth state keys live under it. */
  redisPrefix: string;
  /** Upper bound of the feed render cache, in bytes (default 64 MiB). */
  renderCacheMaxBytes?: number;
};

export interface WebDeps {
  settings: WebSettings;
  /** Command connection (fails fast): OAuth state, admin sessions, rate limits, readiness; the queues'. */
  redis: RedisClient;
  /** Readiness's own Postgres connection, outside the pool. */
  postgresProbe: PostgresProbe;
  /** Readiness of the other roles this process runs (worker, scheduler), served as /readyz/<role>. */
  roleReadiness?: Record<string, ReadinessCheck>;
  connections: ConnectionStore;
  /** The connections as the admin's pages list and change them; event types a feed may name. */
  connectionAdmin: ConnectionAdminStore;
  /** One connection's runs, upstream calls and open slots over time (the admin's connection page). */
  connectionDetail: ConnectionDetailStore;
  feeds: FeedStore;
  /** The calendar name a feed's subscribe links carry. */
  feedNames: FeedNameStore;
  teams: TeamStore;
  /** What feeds and the JSON API read of the snapshots. */
  feedContent: FeedContentStore;
  /** What each feed last published per event (SEQUENCE and change time). */
  eventRevisions: EventRevisionStore;
  /** The JSON API's keys (their hashes). */
  apiKeys: ApiKeyStore;
  /** Share links: the share pages resolve them; the owner's and admin's pages make and revoke them. */
  shareLinks: ShareLinkStore;
  /** Webhook endpoints, registered on the admin's and the owner's pages. */
  webhooks: WebhookStore;
  /** CalDAV destinations of feeds: the owner's and the admin's pages list, add and act on them. */
  caldavDestinations: CaldavDestinations;
  /** The admin's report pages read the history through it. */
  reports: ReportStore;
  /** Postgres's notices of feed changes: feed token lookups are remembered only while it is live. */
  feedChanges: FeedChangeListener;
  oauth: OAuthClient;
  /** Identifies the account via /users/me when the token carries no `sub`. */
  api: ApiClient;
  syncQueue: Queue<SyncJobData>;
  tickQueue: Queue;
  webhookQueue: Queue<WebhookJobData>;
  /** Every queue, for Bull Board. */
  dashboardQueues: Queue[];
  enqueueSync(connectionIds: string[]): Promise<void>;
  metrics: Metrics;
  logger: Logger;
  now: () => Date;
}
