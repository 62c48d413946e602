// Each role's dependencies, from the config, the shared clients, the stores and the services, and the readiness
// each one adds to the process's /readyz. Roles are returned in the order they start: the worker before the web
// role (whose readiness reports it), the health server last.
import type { ReadinessCheck } from '../lib/readiness.js';
import { schedulerReadiness, workerReadiness } from '../lib/readiness.js';
import type { Releasers } from '../lib/releasers.js';
import { startFeedChangeListener } from '../store/feed-change-listener.js';
import { tickIsScheduled } from '../sync/scheduler.js';
import { createHealthRole } from '../roles/health-role.js';
import type { Role } from '../roles/role.js';
import { createSchedulerRole } from '../roles/scheduler-role.js';
import { createWebRole } from '../roles/web-role.js';
import { createWorkerRole } from '../roles/worker-role.js';
import { openPostgresProbe, shardedQueues, type Clients } from './clients.js';
import type { Clock } from './clock.js';
import type { DaemonConfig } from './daemon-config.js';
import type { Services } from './services.js';
import type { Stores } from './stores.js';
import { composeWebDeps } from './web-deps.js';

/** The roles a process can be asked to run (`slotfeed start` runs all three). */
export type RoleName = 'scheduler' | 'worker' | 'web';

/** One process's parts, composed from its config: what its roles run on. */
export interface Slotfeed {
  clients: Clients;
  stores: Stores;
  services: Services;
}

/**
 * The roles `names` asks for, and the health server when HEALTH_PORT is set without the web role. Readiness's
 * Postgres probe is opened (on a session of its own, closed with the process) only where something serves it.
 */
export function composeRoles(
  names: readonly RoleName[],
  config: DaemonConfig,
  { clients, stores, services }: Slotfeed,
  releasers: Releasers,
  clock: Clock,
): Role[] {
  const every = clock.every ? { every: clock.every } : {};
  const prefix = config.redis.prefix;
  const roles: Role[] = [];
  const runs = (name: RoleName) => names.includes(name);
  const serveHealth = runs('web') || config.sync.healthPort !== undefined;
  const postgresProbe = serveHealth ? openPostgresProbe(clients, releasers) : undefined;
  const roleReadiness: Record<string, ReadinessCheck> = {};

  if (runs('worker')) {
    roles.push(
      createWorkerRole({
        sync: {
          deps: services.syncDeps,
          queue: clients.syncShards,
          settings: {
            connection: clients.bullRedis,
            concurrency: config.sync.workerConcurrency,
            lockSeconds: config.sync.workerLockSeconds,
            shutdownGraceSeconds: config.sync.shutdownGraceSeconds,
            errors: clients.errors,
          },
          logger: clients.logger.child({ role: 'worker' }),
        },
        webhooks: {
          queue: clients.webhookShards,
          queueConnection: clients.redis,
          connection: clients.bullRedis,
          concurrency: config.webhooks.concurrency,
          lockSeconds: config.sync.workerLockSeconds,
          shutdownGraceMs: config.sync.shutdownGraceSeconds * 1000,
          dispatchIntervalMs: config.webhooks.dispatchIntervalMs,
          sweepIntervalSeconds: config.webhooks.sweepIntervalSeconds,
          ...every,
          retry: { maxAttempts: config.webhooks.maxAttempts, retryBaseMs: config.webhooks.retryBaseMs },
          delivery: {
            deliveries: stores.webhookDeliveries,
            secretOf: (endpointId) => stores.webhooks.secretOf(endpointId),
            now: clock.now,
            settings: {
              timeoutMs: config.webhooks.timeoutMs,
              allowPrivateTargets: config.webhooks.allowPrivateTargets,
              disableAfterSeconds: config.webhooks.disableAfterSeconds,
            },
          },
          metrics: clients.metrics,
          errors: clients.errors,
          logger: clients.logger.child({ role: 'webhooks' }),
        },
        webhookWrites: services.webhookWrites,
        feedCommits: services.feedCommits,
        caldav: {
          queue: clients.caldavShards,
          connection: clients.bullRedis,
          redis: clients.redis,
          prefix,
          concurrency: config.caldav.concurrency,
          lockSeconds: config.sync.workerLockSeconds,
          shutdownGraceMs: config.sync.shutdownGraceSeconds * 1000,
          dispatchIntervalMs: config.caldav.dispatchIntervalMs,
          push: services.caldavPush,
          hostLines: services.caldavHostGate,
          cleanUp: services.caldavCleanUp,
          errors: clients.errors,
          logger: clients.logger.child({ role: 'caldav' }),
        },
      }),
    );
    if (postgresProbe) roleReadiness.worker = workerReadiness(postgresProbe, clients.redis);
  }
  if (runs('scheduler') && postgresProbe) {
    roleReadiness.scheduler = schedulerReadiness(postgresProbe, clients.redis, () =>
      tickIsScheduled(clients.tickQueue),
    );
  }
  if (runs('web') && postgresProbe) {
    const logger = clients.logger.child({ role: 'web' });
    roles.push(
      createWebRole({
        openFeedChanges: () => startFeedChangeListener({ sessions: clients.pgSessions, logger }),
        webDeps: (feedChanges) =>
          composeWebDeps(
            config,
            clients,
            stores,
            services,
            { postgresProbe, feedChanges, roleReadiness, logger },
            clock,
          ),
        logger: clients.logger,
      }),
    );
  }
  if (runs('scheduler')) {
    roles.push(
      createSchedulerRole({
        scheduler: {
          ...services.tickDeps,
          tickQueue: clients.tickQueue,
          connection: clients.bullRedis,
          queueConnection: clients.redis,
          prefix,
          tickSeconds: config.sync.tickSeconds,
          shutdownGraceMs: config.sync.shutdownGraceSeconds * 1000,
          errors: clients.errors,
          ...every,
        },
        retention: {
          retention: stores.retention,
          redis: clients.redis,
          prefix,
          settings: config.sync.retention,
          now: clock.now,
          logger: clients.logger.child({ role: 'retention' }),
        },
        stateGauges: {
          registry: clients.metrics.registry,
          readers: {
            connectionsByStatus: () => stores.connectionAdmin.countsByStatus(),
            async queueJobs() {
              const states = ['waiting', 'delayed', 'active', 'failed'] as const;
              // Each queue's count is the sum over its shards.
              const queues = shardedQueues(clients);
              const counts = await Promise.all(
                queues.map(async ({ shards }) => {
                  const perShard = await Promise.all(shards.map((shard) => shard.getJobCounts(...states)));
                  return Object.fromEntries(
                    states.map((state) => [state, perShard.reduce((sum, c) => sum + (c[state] ?? 0), 0)]),
                  );
                }),
              );
              return queues.flatMap((queue, i) =>
                states.map((state) => ({
                  queue: queue.shards[0]!.name,
                  state,
                  count: counts[i]?.[state] ?? 0,
                })),
              );
            },
          },
        },
      }),
    );
  }
  if (!runs('web') && postgresProbe && config.sync.healthPort !== undefined) {
    roles.push(
      createHealthRole({
        server: {
          host: config.web.host,
          port: config.sync.healthPort,
          readiness: { checks: roleReadiness, primary: Object.keys(roleReadiness) },
          metrics: clients.metrics,
          logger: clients.logger.child({ role: 'health' }),
        },
        logger: clients.logger,
      }),
    );
  }
  return roles;
}
