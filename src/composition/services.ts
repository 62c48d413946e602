// The services over the clients and stores: the sync pipeline's dependencies (the worker runs it), what a
// scheduler tick needs, the signal by which a commit tells the webhook dispatcher to look, and the CalDAV
// destinations' push (the worker runs it) and service (pages and commands use it).
import { openCalDavAccount } from '../caldav/index.js';
import { enqueueCleanups, enqueuePushes } from '../destinations/caldav-queue.js';
import type { CleanUpDeps } from '../destinations/clean-up.js';
import { createHostLimits, type HostLimits } from '../destinations/host-limits.js';
import { createHostGate, type HostGate } from '../destinations/host-gate.js';
import {
  createCaldavDestinations,
  type CaldavDestinations,
} from '../destinations/caldav-destinations-service.js';
import type { OpenCalendarAccount } from '../destinations/calendar-port.js';
import {
  createFeedObjectsCache,
  feedEventObjects,
  type FeedEventObjectsDeps,
} from '../destinations/feed-event-objects.js';
import { renderCalendar } from '../feeds/render-feed.js';
import type { PushDeps } from '../destinations/push-destination.js';
import { createRedisRateLimiter } from '../lib/redis-rate-limiter.js';
import { createEventRevisions } from '../serving/event-revisions.js';
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
  /** Raised when a commit in this process changed a feed: the CalDAV dispatcher looks for due pushes at once. */
  feedCommits: Signal;
  /** What one push of a CalDAV destination runs on (destinations/push-destination.ts): the worker's, and tests'. */
  caldavPush: PushDeps;
  /** This process's lines at the CalDAV hosts (destinations/host-gate.ts): the worker parks pushes sent back there. */
  caldavHostGate: HostGate;
  caldavCleanUp: CleanUpDeps;
  /** Add, list, remove, replace credentials, push and reconcile now: for pages and commands. */
  caldavDestinations: CaldavDestinations;
}

/** Bytes of feeds' event resources a worker keeps for its pushes (the web role's render cache is its own). */
const PUSH_OBJECTS_CACHE_BYTES = 16 * 1024 * 1024;

/** The feed as its .ics shows it, for pushes: the same settings, revisions and rendering as the web role's feed route. */
export function pushedFeedDeps(
  config: Pick<DaemonConfig, 'web' | 'sync'>,
  stores: Pick<Stores, 'eventProofs' | 'feeds' | 'feedContent' | 'eventRevisions'>,
  clock: Pick<Clock, 'now'>,
): FeedEventObjectsDeps {
  return {
    proofs: stores.eventProofs,
    feeds: stores.feeds,
    kept: createFeedObjectsCache(PUSH_OBJECTS_CACHE_BYTES),
    publication: {
      content: stores.feedContent,
      revisions: createEventRevisions(stores.eventRevisions),
      settings: {
        feedDefaultDays: config.web.feedDefaultDays,
        feedMaxEvents: config.web.feedMaxEvents,
        refreshIntervalSeconds: config.sync.intervalSeconds,
      },
      now: clock.now,
    },
    render: renderCalendar,
  };
}

export function composeServices(
  config: DaemonConfig,
  clients: Clients,
  stores: Pick<
    Stores,
    | 'connections'
    | 'syncConnections'
    | 'snapshots'
    | 'feeds'
    | 'feedContent'
    | 'eventRevisions'
    | 'caldavDestinations'
    | 'caldavCleanups'
    | 'eventProofs'
  >,
  clock: Clock = systemClock,
  /** What the sync's upstream clients send with; absent: the global fetch (the demo's history passes its own). */
  upstreamFetch?: typeof fetch,
): Services {
  const { metrics } = clients;
  const prefix = config.redis.prefix;
  const webhookWrites = createSignal();
  const feedCommits = createSignal();
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
        { signal, ...(upstreamFetch ? { fetch: upstreamFetch } : {}) },
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
    onFeedChanged: () => feedCommits.notify(),
  };
  const tickDeps: TickDeps = {
    connections: stores.connections,
    syncQueue: clients.syncShards,
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
  // Fair to every CalDAV server: slots and a rate per host, shared by every worker through Redis.
  const hostLimits = createHostLimits(clients.redis, {
    concurrency: config.caldav.hostConcurrency,
    perSecond: config.caldav.hostRatePerSecond,
    slotTimeoutMs: config.sync.workerLockSeconds * 1000,
    keyPrefix: `${prefix}:caldav-host`,
  });
  const accountPacedBy =
    (pace: HostLimits['pace']): OpenCalendarAccount =>
    (target) =>
      openCalDavAccount({
        ...target,
        allowPrivateTargets: config.caldav.allowPrivateTargets,
        timeoutMs: config.caldav.timeoutSeconds * 1000,
        now: clock.now,
        beforeRequest: (url, signal) => pace(url.host, signal),
      });
  // A worker's pushes and cleanups keep off a held host; a person's own action on a page is tried now.
  const openAccount = accountPacedBy(hostLimits.pace);
  const openAccountForPerson = accountPacedBy(hostLimits.paceOwnAction);
  const pushedFeeds = pushedFeedDeps(config, stores, clock);
  // This process's pushes wait in a line at their host, ready to send, for the slot one of them lets go. Its places
  // count the pushes still reading their feed too: as many as the host's slots, so that a push is ready for each
  // slot let go (caldav-push bench: 3.3–3.7 of 4 requests in service, against 1.7–3.1 with half as many).
  const caldavHostGate = createHostGate(hostLimits, {
    waitingPerHost: config.caldav.hostConcurrency,
  });
  const caldavPush: PushDeps = {
    destinations: stores.caldavDestinations,
    openAccount,
    feedEvents: (feedId, read) => feedEventObjects(pushedFeeds, feedId, read),
    proofs: stores.eventProofs,
    hosts: caldavHostGate,
    reconcileIntervalMs: config.caldav.reconcileIntervalMinutes * 60_000,
    now: clock.now,
    metrics,
    logger: clients.logger.child({ role: 'caldav' }),
  };
  const caldavCleanUp: CleanUpDeps = {
    cleanups: stores.caldavCleanups,
    openAccount,
    proofs: stores.eventProofs,
    now: clock.now,
    logger: clients.logger.child({ role: 'caldav' }),
  };
  const caldavDestinations = createCaldavDestinations({
    destinations: stores.caldavDestinations,
    cleanups: stores.caldavCleanups,
    feeds: stores.feeds,
    openAccount: openAccountForPerson,
    enqueue: (ids) => enqueuePushes(clients.caldavShards, ids),
    enqueueCleanup: (ids) => enqueueCleanups(clients.caldavShards, ids),
    now: clock.now,
  });
  return {
    syncDeps,
    tickDeps,
    webhookWrites,
    feedCommits,
    caldavPush,
    caldavHostGate,
    caldavCleanUp,
    caldavDestinations,
  };
}
