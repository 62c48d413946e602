// Every store (store/: the only door to Postgres), created once per process over the shared pools and passed
// to whatever needs it. Stores hold no state of their own: what they know is in Postgres.
import type { Config } from '../config.js';
import { createApiKeyStore, type ApiKeyStore } from '../store/api-keys.js';
import { createCaldavDestinationStore, type CaldavDestinationStore } from '../store/caldav-destinations.js';
import { createConnectionAdminStore, type ConnectionAdminStore } from '../store/connection-admin.js';
import { createConnectionDetailStore, type ConnectionDetailStore } from '../store/connection-detail.js';
import { createConnectionStore, type ConnectionStore } from '../store/connections.js';
import { createEventRevisionStore, type EventRevisionStore } from '../store/event-revisions.js';
import { createFeedContentStore, type FeedContentStore } from '../store/feed-content.js';
import { createFeedNameStore, type FeedNameStore } from '../store/feed-names.js';
import { createFeedStore, type FeedStore } from '../store/feeds.js';
import { createShareLinkStore, type ShareLinkStore } from '../store/share-links.js';
import { createReportStore, type ReportStore } from '../store/reports.js';
import { createRetentionStore, type RetentionStore } from '../store/retention.js';
import { createSnapshotStore, type SnapshotStore } from '../store/snapshot-store.js';
import { createSyncProgressStore, type SyncProgressStore } from '../store/sync-progress.js';
import { createTeamStore, type TeamStore } from '../store/teams.js';
import { createTokenVault, vaultKeyFromBase64, type TokenVault } from '../store/token-vault.js';
import { createCaldavCleanupStore, type CaldavCleanupStore } from '../store/caldav-cleanups.js';
import { eventProofs, type EventProofs } from '../destinations/event-proofs.js';
import { createWebhookDeliveryStore, type WebhookDeliveryStore } from '../store/webhook-deliveries.js';
import { createWebhookStore, type WebhookStore } from '../store/webhooks.js';
import type { Clients } from './clients.js';
import type { DaemonConfig } from './daemon-config.js';

/** On the web role's and the scheduler's pool (`clients.prisma`), but for the two the sync worker writes through. */
export interface Stores {
  connections: ConnectionStore;
  connectionAdmin: ConnectionAdminStore;
  connectionDetail: ConnectionDetailStore;
  feeds: FeedStore;
  feedNames: FeedNameStore;
  feedContent: FeedContentStore;
  eventRevisions: EventRevisionStore;
  teams: TeamStore;
  apiKeys: ApiKeyStore;
  /** Share links of feeds: their pages, and who made them. */
  shareLinks: ShareLinkStore;
  webhooks: WebhookStore;
  webhookDeliveries: WebhookDeliveryStore;
  /** CalDAV destinations of feeds, their record of events written and their log. */
  caldavDestinations: CaldavDestinationStore;
  caldavCleanups: CaldavCleanupStore;
  /** Binds each event slotfeed writes into a calendar to its UID (destinations/event-proofs.ts). */
  eventProofs: EventProofs;
  reports: ReportStore;
  retention: RetentionStore;
  /** What the demo reads to follow its accounts' syncs. */
  syncProgress: SyncProgressStore;
  /** The sync worker's connections, on its own pool (`clients.syncPrisma`, longer timeouts). */
  syncConnections: ConnectionStore;
  /** The sync worker's snapshot commits, on its own pool. */
  snapshots: SnapshotStore;
}

export function tokenVaultFor(vault: Config['vault']): TokenVault {
  return createTokenVault(vaultKeyFromBase64(vault.currentKey), vault.previousKeys.map(vaultKeyFromBase64));
}

export function createStores(
  config: Pick<DaemonConfig, 'vault' | 'webhooks'>,
  clients: Pick<Clients, 'prisma' | 'syncPrisma' | 'logger'>,
): Stores {
  const { prisma, syncPrisma } = clients;
  const vault = tokenVaultFor(config.vault);
  const feeds = createFeedStore(prisma, clients.logger, vault);
  return {
    connections: createConnectionStore(prisma, vault),
    connectionAdmin: createConnectionAdminStore(prisma, feeds),
    connectionDetail: createConnectionDetailStore(prisma),
    feeds,
    feedNames: createFeedNameStore(prisma),
    feedContent: createFeedContentStore(prisma),
    eventRevisions: createEventRevisionStore(prisma),
    teams: createTeamStore(prisma),
    apiKeys: createApiKeyStore(prisma),
    shareLinks: createShareLinkStore(prisma, vault),
    webhooks: createWebhookStore(prisma, vault, { allowPrivateTargets: config.webhooks.allowPrivateTargets }),
    webhookDeliveries: createWebhookDeliveryStore(prisma),
    caldavDestinations: createCaldavDestinationStore(prisma, vault),
    caldavCleanups: createCaldavCleanupStore(prisma, vault),
    eventProofs: eventProofs(vault),
    reports: createReportStore(prisma),
    retention: createRetentionStore(prisma),
    syncProgress: createSyncProgressStore(prisma),
    syncConnections: createConnectionStore(syncPrisma, vault),
    snapshots: createSnapshotStore(syncPrisma),
  };
}
