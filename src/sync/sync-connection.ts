// One sync attempt of one connection: fresh token → pull → validate (done by the upstream client) → commit.
// Success commits the snapshot in one transaction; failure writes only the attempt's run row and the
// connection's last-sync status, so the last good snapshot stays and feeds keep serving it.
import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../lib/redis-connection.js';
import type { Metrics } from '../lib/metrics.js';
import type { RateLimiter } from '../lib/redis-rate-limiter.js';
import type { Logger } from '../log.js';
import type { ConnectionStore } from '../store/connections.js';
import type { SnapshotStore } from '../store/snapshot-store.js';
import type { RunRecord, SnapshotChanges } from '../store/snapshots.js';
import type { ApiClient, OAuthClient } from '../upstream/index.js';
import type { AdaptBounds } from '../config/sync-bands.js';
import { readBandState, scheduleAfterPull } from './band-schedule.js';
import { classifySyncFailure, nextSyncTime, retryDelayMs, type FailureVerdict } from './failure-policy.js';
import { accountReadDue } from './pull-plan.js';
import { pullSnapshot, type PullScope, type PullSettings } from './pull-snapshot.js';
import { refreshIfExpiring } from './token-refresh.js';
import { createUpstreamSession } from './upstream-session.js';

export interface SyncSettings extends PullSettings {
  /** SYNC_ACCOUNT_INTERVAL: how often a scheduled pull also reads the profile and event types. */
  accountIntervalSeconds: number;
  /** After a sync that failed for good, when to try again: the nearest band's interval. */
  intervalSeconds: number;
  /** How far a connection's own activity may move its bands' intervals. */
  adapt: AdaptBounds;
  jitterRatio: number;
  tokenRefreshMarginSeconds: number;
  backoffMs: number;
}

export interface UpstreamClients {
  api: ApiClient;
  oauth: Pick<OAuthClient, 'refresh'>;
}

export interface SyncDeps {
  /** What an attempt commits or records, and reads of the snapshot stored. */
  snapshots: SnapshotStore;
  connections: ConnectionStore;
  redis: RedisClient;
  keyPrefix: string;
  limiter: RateLimiter;
  /** Upstream clients for one run: every call they make is reported to `onCall`, and `signal` aborts them. */
  upstreamFor(run: { signal?: AbortSignal; onCall: (endpoint: string) => void }): UpstreamClients;
  settings: SyncSettings;
  now: () => Date;
  random: () => number;
  logger: Logger;
  metrics?: Pick<Metrics, 'syncRuns' | 'syncJobDuration' | 'changeStalenessBound' | 'bandPulls'>;
  /** Told when a commit wrote webhook deliveries (the worker's dispatcher hands them over at once). */
  onWebhookDeliveries?: () => void;
  /** Told when a commit changed what the connection's feeds show (the CalDAV dispatcher looks at once). */
  onFeedChanged?: () => void;
}

export interface SyncAttempt {
  connectionId: string;
  jobId: string | null;
  /** 1 for the first attempt. */
  attempt: number;
  maxAttempts: number;
  /** The bands to pull (the scheduler's choice); absent: every band, as a first or a forced sync does. */
  bands?: readonly string[];
  signal?: AbortSignal;
}

/** Thrown after an attempt cut short by a shutdown was recorded: the job goes back to the queue unspent. */
export class SyncInterruptedError extends Error {
  constructor() {
    super('sync interrupted by shutdown');
    this.name = 'SyncInterruptedError';
  }
}

/** Thrown after a failed attempt has been recorded; carries what the job layer needs to decide what's next. */
export class SyncFailedError extends Error {
  constructor(
    readonly verdict: FailureVerdict,
    readonly retryDelayMs: number | undefined,
  ) {
    super(`${verdict.code}: ${verdict.message}`);
    this.name = 'SyncFailedError';
  }
}

/**
 * A scheduled pull of some bands is planned by what the store holds (pull-plan.ts); a first sync (nothing
 * stored to plan by) and one asked for pull everything.
 */
async function scopeOf(deps: SyncDeps, attempt: SyncAttempt, startedAt: Date): Promise<PullScope> {
  if (!attempt.bands) return 'all';
  const basis = await deps.snapshots.pullBasis(attempt.connectionId);
  const zone = basis.zone;
  if (zone === null || basis.accountReadAt === null) return 'all';
  return {
    bands: attempt.bands,
    stored: {
      zone,
      eventTypes: basis.eventTypes,
      readAccount: accountReadDue(
        basis.accountReadAt.getTime(),
        startedAt.getTime(),
        deps.settings.accountIntervalSeconds,
      ),
      openSlotsBetween: (from, until) => deps.snapshots.openSlotsBetween(attempt.connectionId, from, until),
      openDates: (from, until) => deps.snapshots.openDates(attempt.connectionId, zone, from, until),
    },
  };
}

export async function syncConnection(deps: SyncDeps, attempt: SyncAttempt): Promise<SnapshotChanges> {
  const run: RunRecord = {
    id: randomUUID(),
    jobId: attempt.jobId,
    attempt: attempt.attempt,
    startedAt: deps.now(),
    callsByEndpoint: {},
  };
  const logger = deps.logger.child({
    connectionId: attempt.connectionId,
    jobId: attempt.jobId,
    runId: run.id,
  });
  const countCall = (endpoint: string) => {
    run.callsByEndpoint[endpoint] = (run.callsByEndpoint[endpoint] ?? 0) + 1;
  };
  const { api, oauth } = deps.upstreamFor({ signal: attempt.signal, onCall: countCall });
  const startedMs = performance.now();
  const finish = (outcome: 'succeeded' | 'failed' | 'superseded' | 'interrupted') => {
    deps.metrics?.syncRuns.inc({ outcome });
    deps.metrics?.syncJobDuration.observe({ outcome }, (performance.now() - startedMs) / 1000);
  };
  const tokenDeps = {
    connections: deps.connections,
    oauth,
    limiter: deps.limiter,
    signal: attempt.signal,
    redis: deps.redis,
    keyPrefix: deps.keyPrefix,
    marginMs: deps.settings.tokenRefreshMarginSeconds * 1000,
    now: deps.now,
    logger,
  };

  try {
    run.pullSequence = await deps.snapshots.beginPull(attempt.connectionId);
    const session = createUpstreamSession({
      api,
      limiter: deps.limiter,
      accessToken: (request) => refreshIfExpiring(tokenDeps, attempt.connectionId, request),
      logger,
      signal: attempt.signal,
    });
    const scope = await scopeOf(deps, attempt, run.startedAt);
    const snapshot = await pullSnapshot(session, api, deps.settings, run.startedAt, scope);
    const now = deps.now();
    const pulledBands = snapshot.horizon?.bands ?? [];
    const changes = await deps.snapshots.commit({
      connectionId: attempt.connectionId,
      snapshot,
      run,
      now,
      next: (previous, committed) => {
        const next = scheduleAfterPull(
          deps.settings.bands,
          readBandState(previous),
          pulledBands.map((band) => ({
            name: band.name,
            calls: band.calls,
            // A first sync finds everything new: that says nothing about how often it changes.
            changes:
              committed.previousGoodSyncAt === null ? null : (committed.changedByPulledBand[band.name] ?? 0),
          })),
          now,
          deps.settings.adapt,
          deps.settings.jitterRatio,
          deps.random,
        );
        return { bandState: next.state, nextSyncAt: next.nextSyncAt };
      },
    });
    if (changes.superseded) {
      // Not a failure: a newer pull committed first, and its snapshot is the one to keep.
      logger.info({ pullSequence: run.pullSequence }, 'sync superseded by a newer pull; nothing committed');
      finish('superseded');
      return changes;
    }
    logger.info(
      {
        changes,
        calls: run.callsByEndpoint,
        // More than asked for when the event types enabled changed (pull-snapshot.ts).
        bands: pulledBands.map((band) => band.name),
        askedFor: attempt.bands ?? 'all',
      },
      'sync committed',
    );
    if (changes.webhookDeliveries > 0) deps.onWebhookDeliveries?.();
    if (changes.feedVersionMoved) deps.onFeedChanged?.();
    for (const band of pulledBands) deps.metrics?.bandPulls.inc({ band: band.name });
    for (const { band, boundSeconds, changes: count } of changes.changeStaleness) {
      for (let i = 0; i < count; i++) deps.metrics?.changeStalenessBound.observe({ band }, boundSeconds);
    }
    finish('succeeded');
    return changes;
  } catch (thrown: unknown) {
    if (attempt.signal?.aborted) {
      // Whatever the abort made fail (a call, a rate-limit wait), the cause is the shutdown, not the upstream.
      finish('interrupted');
      logger.info('sync interrupted by shutdown; the job goes back to the queue');
      await deps.snapshots
        .recordInterrupted({
          connectionId: attempt.connectionId,
          run,
          now: deps.now(),
        })
        .catch((recordError: unknown) =>
          logger.error({ err: recordError }, 'could not record the interrupted sync'),
        );
      throw new SyncInterruptedError();
    }
    const verdict = classifySyncFailure(thrown);
    finish('failed');
    const now = deps.now();
    const final =
      verdict.permanent || (verdict.rateLimitedMs === undefined && attempt.attempt >= attempt.maxAttempts);
    const delay = final
      ? undefined
      : (verdict.rateLimitedMs ?? retryDelayMs(attempt.attempt, deps.settings.backoffMs, deps.random));
    logger.warn(
      { code: verdict.code, error: verdict.message, final, retryInMs: delay },
      'sync attempt failed',
    );
    try {
      await deps.snapshots.recordFailed({
        connectionId: attempt.connectionId,
        run,
        now,
        error: { code: verdict.code, message: verdict.message },
        ...(delay !== undefined ? { retryAt: new Date(now.getTime() + delay) } : {}),
        ...(final
          ? {
              nextSyncAt: nextSyncTime(
                now,
                deps.settings.intervalSeconds,
                deps.settings.jitterRatio,
                deps.random,
              ),
            }
          : {}),
      });
    } catch (recordError: unknown) {
      // The database may be what failed; the job still retries, and its next attempt records itself.
      logger.error({ err: recordError }, 'could not record the failed sync attempt');
    }
    throw new SyncFailedError(verdict, delay);
  }
}
