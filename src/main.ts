// The composition root's last step: the roles a process runs, on the clients and services composition/ opened.
// Nothing outside main.ts, composition/ and roles/ constructs a Prisma client, a Redis connection, a Postgres
// session or a queue; the commands (src/cli) and the tests take theirs from composition/.
import type { Releasers } from './lib/releasers.js';
import { schedulerReadiness, workerReadiness, type ReadinessCheck } from './lib/readiness.js';
import { registerStateGauges } from './lib/state-gauges.js';
import { CONNECTION_STATUSES } from './store/connection-admin.js';
import { createRetentionStore } from './store/retention.js';
import { createWebhookDeliveryStore } from './store/webhook-deliveries.js';
import { startRetention } from './sync/retention-schedule.js';
import { startScheduler, tickIsScheduled } from './sync/scheduler.js';
import { startSyncWorker } from './sync/sync-worker.js';
import { startWebhookWorker } from './webhooks/webhook-queue.js';
import { startHealthServer } from './web/health-server.js';
import { openFeedChanges, openPostgresProbe, type Clients } from './composition/clients.js';
import { systemClock, type Clock } from './composition/clock.js';
import type { DaemonConfig } from './composition/daemon-config.js';
import { tickDeps, type Services } from './composition/services.js';
import { composeWebDeps } from './composition/web-deps.js';

export type Role = 'scheduler' | 'worker' | 'web';

/** Starts the requested roles in this process and registers their shutdown. */
export async function startRoles(
  roles: readonly Role[],
  config: DaemonConfig,
  clients: Clients,
  services: Services,
  releasers: Releasers,
  clock: Clock = systemClock,
): Promise<void> {
  if (config.sync.bandsBeyondHorizon.length > 0) {
    clients.logger.warn(
      { bands: config.sync.bandsBeyondHorizon, horizonDays: config.sync.horizonDays },
      'SYNC_BANDS has bands that start beyond SYNC_HORIZON_DAYS: they are left out',
    );
  }
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
        errors: clients.errors,
      },
      clients.logger.child({ role: 'worker' }),
    );
    releasers.add('sync worker', () => worker.close());
    await worker.worker.waitUntilReady();
    const webhookWorker = startWebhookWorker({
      queue: services.webhookQueue,
      queueConnection: clients.redis,
      connection: clients.bullRedis,
      prefix: config.redis.prefix,
      concurrency: config.webhooks.concurrency,
      lockSeconds: config.sync.workerLockSeconds,
      dispatchIntervalMs: config.webhooks.dispatchIntervalMs,
      sweepIntervalSeconds: config.webhooks.sweepIntervalSeconds,
      ...(clock.every ? { every: clock.every } : {}),
      retry: { maxAttempts: config.webhooks.maxAttempts, retryBaseMs: config.webhooks.retryBaseMs },
      delivery: {
        deliveries: createWebhookDeliveryStore(clients.prisma),
        secretOf: (endpointId) => services.webhooks.secretOf(endpointId),
        now: clock.now,
        settings: {
          timeoutMs: config.webhooks.timeoutMs,
          allowPrivateTargets: config.webhooks.allowPrivateTargets,
          disableAfterSeconds: config.webhooks.disableAfterSeconds,
        },
      },
      metrics: services.metrics,
      errors: clients.errors,
      logger: clients.logger.child({ role: 'webhooks' }),
    });
    const stopListening = services.webhookWrites.on(() => webhookWorker.kick());
    releasers.add('webhook worker', async () => {
      stopListening();
      await webhookWorker.close();
    });
  }
  const serveHealth = roles.includes('web') || config.sync.healthPort !== undefined;
  const postgresProbe = serveHealth ? openPostgresProbe(clients, releasers) : undefined;
  const roleReadiness: Record<string, ReadinessCheck> = {};
  if (postgresProbe && roles.includes('worker')) {
    roleReadiness.worker = workerReadiness(postgresProbe, clients.redis);
  }
  if (postgresProbe && roles.includes('scheduler')) {
    roleReadiness.scheduler = schedulerReadiness(postgresProbe, clients.redis, () =>
      tickIsScheduled(services.tickQueue),
    );
  }
  if (roles.includes('web') && postgresProbe) {
    const logger = clients.logger.child({ role: 'web' });
    const feedChanges = await openFeedChanges(clients, releasers, logger);
    // Loaded only where the web role runs: its modules (fastify plugins, the API's schemas and reference page,
    // the feed renderers) are ~35 MiB a worker or scheduler process would carry for nothing.
    const { startWeb } = await import('./web/app.js');
    const web = await startWeb(
      composeWebDeps(config, clients, services, { postgresProbe, feedChanges, roleReadiness, logger }, clock),
    );
    releasers.add('web', () => web.close());
    clients.logger.info({ url: web.url }, 'web server listening');
  }
  if (roles.includes('scheduler')) {
    registerStateGauges(services.metrics.registry, {
      async connectionsByStatus() {
        const rows = await clients.prisma.connection.groupBy({ by: ['status'], _count: { _all: true } });
        return Object.fromEntries(
          CONNECTION_STATUSES.map((status) => [
            status,
            rows.find((r) => r.status === status)?._count._all ?? 0,
          ]),
        );
      },
      async queueJobs() {
        const states = ['waiting', 'delayed', 'active', 'failed'] as const;
        const queues = [services.syncQueue, services.webhookQueue];
        const counts = await Promise.all(queues.map((queue) => queue.getJobCounts(...states)));
        return queues.flatMap((queue, i) =>
          states.map((state) => ({ queue: queue.name, state, count: counts[i]?.[state] ?? 0 })),
        );
      },
    });
    const retention = startRetention({
      retention: createRetentionStore(clients.prisma),
      redis: clients.redis,
      prefix: config.redis.prefix,
      settings: config.sync.retention,
      now: clock.now,
      logger: clients.logger.child({ role: 'retention' }),
    });
    releasers.add('retention', () => retention.close());
    const scheduler = await startScheduler({
      ...tickDeps(config, clients, services, clock),
      tickQueue: services.tickQueue,
      connection: clients.bullRedis,
      queueConnection: clients.redis,
      prefix: config.redis.prefix,
      tickSeconds: config.sync.tickSeconds,
      errors: clients.errors,
      ...(clock.every ? { every: clock.every } : {}),
    });
    releasers.add('scheduler', () => scheduler.close());
  }
  if (!roles.includes('web') && postgresProbe && config.sync.healthPort !== undefined) {
    const health = await startHealthServer({
      host: config.web.host,
      port: config.sync.healthPort,
      readiness: { checks: roleReadiness, primary: Object.keys(roleReadiness) },
      metrics: services.metrics,
      logger: clients.logger.child({ role: 'health' }),
    });
    releasers.add('health server', () => health.close());
    clients.logger.info({ url: health.url }, 'health server listening');
  }
}
