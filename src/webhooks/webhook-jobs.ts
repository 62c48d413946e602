// What a delivery job is in the `webhooks` queue: its id is the delivery's (handing one over twice is
// harmless), and its options are the retry policy, declared once here: WEBHOOK_MAX_ATTEMPTS attempts, the n-th
// after WEBHOOK_RETRY_BASE_MS × 2^(n-2), which with the defaults (15, 5 s) spreads them over about a day.
import type { JobsOptions } from 'bullmq';

export const WEBHOOK_QUEUE = 'webhooks';
export const WEBHOOK_JOB = 'deliver';

export interface WebhookJobData {
  deliveryId: string;
}

export interface WebhookRetrySettings {
  maxAttempts: number;
  retryBaseMs: number;
}

export function webhookJobOptions(deliveryId: string, retry: WebhookRetrySettings): JobsOptions {
  return {
    jobId: deliveryId,
    attempts: retry.maxAttempts,
    backoff: { type: 'exponential', delay: retry.retryBaseMs },
    removeOnComplete: { age: 3600, count: 10_000 },
    removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
  };
}

/**
 * How long a delivery's retries last, first attempt to last: the sum of the waits before each retry that
 * webhookJobOptions asks BullMQ for (exponential: retryBaseMs × 2^(n-1) before the n-th retry). About 22.8 h
 * with the defaults. test/webhooks/webhook-jobs.test.ts holds it to BullMQ's own backoff arithmetic.
 */
export function retryWindowMs(retry: WebhookRetrySettings): number {
  return retry.retryBaseMs * (2 ** (retry.maxAttempts - 1) - 1);
}
