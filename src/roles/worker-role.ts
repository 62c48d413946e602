// The worker role: the sync worker, which runs the syncs the scheduler and operators enqueue, and beside it the
// webhook worker (deliveries, the dispatcher that hands new ones to it, the lost-job sweep), which a commit in
// this process wakes at once, and the CalDAV worker (pushes to destinations, and their dispatcher, which a commit
// in this process that changed a feed wakes at once: its poll is only the safety net).
import type { QueueOrShards } from '../lib/queue-shards.js';
import { startCaldavWorker } from '../destinations/caldav-queue.js';
import type { Signal } from '../lib/signal.js';
import type { Logger } from '../log.js';
import type { SyncJobData } from '../sync/queues.js';
import type { SyncDeps } from '../sync/sync-connection.js';
import { startSyncWorker, type SyncWorkerSettings } from '../sync/sync-worker.js';
import { startWebhookWorker } from '../webhooks/webhook-queue.js';
import { startedParts, type Role } from './role.js';

export interface WorkerRoleDeps {
  sync: { deps: SyncDeps; queue: QueueOrShards<SyncJobData>; settings: SyncWorkerSettings; logger: Logger };
  webhooks: Parameters<typeof startWebhookWorker>[0];
  /** Raised when a commit in this process wrote webhook deliveries: the dispatcher looks at once. */
  webhookWrites: Signal;
  caldav: Parameters<typeof startCaldavWorker>[0];
  /** Raised when a commit in this process changed a feed: the CalDAV dispatcher looks at once. */
  feedCommits: Signal;
}

export function createWorkerRole(deps: WorkerRoleDeps): Role {
  const parts = startedParts();
  return {
    name: 'worker',
    async start() {
      const { sync } = deps;
      const worker = startSyncWorker(sync.deps, sync.queue, sync.settings, sync.logger);
      parts.add('sync worker', () => worker.close());
      await Promise.all(worker.workers.map((shardWorker) => shardWorker.waitUntilReady()));
      const webhookWorker = startWebhookWorker(deps.webhooks);
      const stopListening = deps.webhookWrites.on(() => webhookWorker.kick());
      parts.add('webhook worker', async () => {
        stopListening();
        await webhookWorker.close();
      });
      const caldavWorker = startCaldavWorker(deps.caldav);
      const stopWaking = deps.feedCommits.on(() => caldavWorker.kick());
      parts.add('caldav worker', async () => {
        stopWaking();
        await caldavWorker.close();
      });
    },
    close: parts.close,
  };
}
