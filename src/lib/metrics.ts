// Prometheus metrics. One Registry per process, created by the composition root and passed to whoever counts:
// prom-client's default global registry would make two apps in one test process share (and double-register)
// their counters.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  /** Finished sync attempts by outcome (succeeded, failed). */
  syncRuns: Counter<'outcome'>;
  /** Upstream HTTP calls by endpoint key ('GET /events', 'POST /oauth2/token') and status ('200', 'timeout'). */
  upstreamCalls: Counter<'endpoint' | 'status'>;
  /** Feed responses by HTTP status (200, 304, 404 …). */
  feedRequests: Counter<'status'>;
  /** Feed render cache lookups: hit or miss. */
  feedRenderCache: Counter<'result'>;
  /** Feed token lookups: remembered (no query), loaded, or unknown (no such active feed). */
  feedLookups: Counter<'result'>;
  /** Feed polls answered while Postgres could not answer: last_good (from memory), gone (404), unavailable (503). */
  feedOutageAnswers: Counter<'answer'>;
  /** Rechecks of served tokens after a change notice: confirmed, gone (revoked, rotated), failed (no answer). */
  feedLastGoodRechecks: Counter<'result'>;
  /** Wall time of sync jobs, by outcome. */
  syncJobDuration: Histogram<'outcome'>;
  /** Every error a Redis connection, queue or worker reported, by source: the log shows repeats once a minute. */
  errors: Counter<'source'>;
  /** Webhook delivery attempts by outcome (delivered, failed, disabled). */
  webhookAttempts: Counter<'outcome'>;
  /** From the event's commit to the receiver's 2xx, for deliveries that succeeded. */
  webhookDeliverySeconds: Histogram;
  /**
   * Per slot change a sync stored, how stale it may have been: the time since its date was last pulled (the
   * change happened after it; store/pull-coverage.ts), by how far ahead the slot is (lib/date-bands.ts).
   */
  changeStalenessBound: Histogram<'band'>;
  /** Per cadence band (SYNC_BANDS), the due pulls the last tick left waiting for budget. */
  bandDeferred: Gauge<'band'>;
  /** Per cadence band, how long the longest waiting of those has been due. */
  bandOverdueSeconds: Gauge<'band'>;
  /** Upstream calls the scheduler has allotted to the syncs it enqueued (SYNC_CALL_BUDGET_PER_SECOND). */
  budgetCallsAllocated: Counter;
  /** Band pulls committed, by cadence band. */
  bandPulls: Counter<'band'>;
  /** CalDAV destination pushes by outcome (pushed, reconciled, failed). */
  caldavPushes: Counter<'outcome'>;
  /** CalDAV push failures by cause (credentials, retry_later, timeout, unreachable, precondition, other …). */
  caldavFailures: Counter<'cause'>;
  /** From the commit that changed a feed to the CalDAV server's answer to the push that carried it. */
  caldavPushLagSeconds: Histogram;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    syncRuns: new Counter({
      name: 'slotfeed_sync_runs_total',
      help: 'Finished sync attempts by outcome.',
      labelNames: ['outcome'],
      registers,
    }),
    upstreamCalls: new Counter({
      name: 'slotfeed_upstream_calls_total',
      help: 'Calls to the scheduling service and its authorization server, by endpoint and status.',
      labelNames: ['endpoint', 'status'],
      registers,
    }),
    feedRequests: new Counter({
      name: 'slotfeed_feed_requests_total',
      help: 'Feed requests by response status.',
      labelNames: ['status'],
      registers,
    }),
    feedRenderCache: new Counter({
      name: 'slotfeed_feed_render_cache_total',
      help: 'Feed render cache lookups by result (hit, miss).',
      labelNames: ['result'],
      registers,
    }),
    feedLookups: new Counter({
      name: 'slotfeed_feed_lookups_total',
      help: 'Feed token lookups by result (remembered: answered from memory; loaded; unknown).',
      labelNames: ['result'],
      registers,
    }),
    feedOutageAnswers: new Counter({
      name: 'slotfeed_feed_outage_answers_total',
      help: 'Feed polls answered while Postgres could not answer, by answer (last_good, gone, unavailable).',
      labelNames: ['answer'],
      registers,
    }),
    feedLastGoodRechecks: new Counter({
      name: 'slotfeed_feed_last_good_rechecks_total',
      help: 'Rechecks of served feed tokens after a change notice, by result (confirmed, gone, failed).',
      labelNames: ['result'],
      registers,
    }),
    syncJobDuration: new Histogram({
      name: 'slotfeed_sync_job_duration_seconds',
      help: 'Duration of sync jobs by outcome.',
      labelNames: ['outcome'],
      // A sync is a few dozen upstream calls: sub-second against a quiet service, minutes under rate limits.
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers,
    }),
    webhookAttempts: new Counter({
      name: 'slotfeed_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome (delivered, failed, disabled).',
      labelNames: ['outcome'],
      registers,
    }),
    webhookDeliverySeconds: new Histogram({
      name: 'slotfeed_webhook_delivery_seconds',
      help: 'Time from the commit that caused a webhook to its successful delivery.',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600],
      registers,
    }),
    changeStalenessBound: new Histogram({
      name: 'slotfeed_change_staleness_bound_seconds',
      help: 'Per stored slot change, the time since its date (or the event type list) was last pulled (how stale it may have been), by date band.',
      labelNames: ['band'],
      buckets: [60, 300, 600, 900, 1800, 3600, 7200, 14_400, 43_200, 86_400],
      registers,
    }),
    bandDeferred: new Gauge({
      name: 'slotfeed_sync_band_deferred',
      help: 'Due band pulls the last scheduler tick left for later because the call budget was spent, by cadence band.',
      labelNames: ['band'],
      registers,
    }),
    bandOverdueSeconds: new Gauge({
      name: 'slotfeed_sync_band_overdue_seconds',
      help: 'How long the longest-waiting deferred band pull has been due, by cadence band (0: none waits).',
      labelNames: ['band'],
      registers,
    }),
    budgetCallsAllocated: new Counter({
      name: 'slotfeed_sync_budget_calls_allocated_total',
      help: 'Upstream calls the scheduler allotted to the sync jobs it enqueued.',
      registers,
    }),
    bandPulls: new Counter({
      name: 'slotfeed_sync_band_pulls_total',
      help: 'Band pulls committed, by cadence band.',
      labelNames: ['band'],
      registers,
    }),
    caldavPushes: new Counter({
      name: 'slotfeed_caldav_pushes_total',
      help: 'Pushes of feeds into CalDAV destinations by outcome (pushed, reconciled, failed).',
      labelNames: ['outcome'],
      registers,
    }),
    caldavFailures: new Counter({
      name: 'slotfeed_caldav_failures_total',
      help: 'Failed CalDAV pushes and events left alone after a precondition failed twice, by cause.',
      labelNames: ['cause'],
      registers,
    }),
    caldavPushLagSeconds: new Histogram({
      name: 'slotfeed_caldav_push_lag_seconds',
      help: 'Time from the commit that changed a feed to the CalDAV server’s answer to the push that carried it.',
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
      registers,
    }),
    errors: new Counter({
      name: 'slotfeed_errors_total',
      help: 'Errors reported by Redis connections, queues and workers, by source (the log shows repeats once per interval).',
      labelNames: ['source'],
      registers,
    }),
  };
}

/** Status label of an upstream call: the HTTP status, or 'error' when no response arrived (timeout, refused). */
export function upstreamStatusLabel(status: number | undefined): string {
  return status === undefined ? 'error' : String(status);
}
