// How whoever sent a test event learns how it went, without the worker: the delivery's row, read until the
// worker has written its first attempt there (or given it up without one). The row is where every attempt is
// written before its job ends, so it is the one place to look; `slotfeed webhooks test --wait` runs where no
// worker runs and may have no Redis settings at all.
import type { WebhookDeliveryRecord } from '../store/webhooks.js';

export type FirstAttempt =
  /** Attempted (delivered or not), or given up without an attempt. */
  | { kind: 'done'; delivery: WebhookDeliveryRecord }
  /** The row is gone: its endpoint was deleted meanwhile. */
  | { kind: 'gone' }
  /** Still untried when the time was up (no worker running?). */
  | { kind: 'waiting'; delivery: WebhookDeliveryRecord };

export interface FirstAttemptOptions {
  timeoutMs: number;
  /** How long between two looks at the row. */
  pollMs?: number;
  sleep?: (ms: number) => Promise<void>;
  /** Milliseconds, for the deadline. */
  clock?: () => number;
}

/** What the last attempt got, in words: the receiver's status, or why there was none (refused, timed out). */
export function attemptAnswer(delivery: WebhookDeliveryRecord): string {
  return delivery.lastStatus !== null
    ? `the receiver answered ${delivery.lastStatus}`
    : (delivery.lastError ?? 'no answer');
}

const done = (delivery: WebhookDeliveryRecord) =>
  delivery.attempts > 0 || delivery.deliveredAt !== null || delivery.givenUpAt !== null;

export async function firstAttemptOf(
  read: (deliveryId: string) => Promise<WebhookDeliveryRecord | undefined>,
  deliveryId: string,
  options: FirstAttemptOptions,
): Promise<FirstAttempt> {
  const sleep = options.sleep ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const clock = options.clock ?? Date.now;
  const deadline = clock() + options.timeoutMs;
  for (;;) {
    const delivery = await read(deliveryId);
    if (delivery === undefined) return { kind: 'gone' };
    if (done(delivery)) return { kind: 'done', delivery };
    if (clock() >= deadline) return { kind: 'waiting', delivery };
    await sleep(Math.min(options.pollMs ?? 200, Math.max(0, deadline - clock())));
  }
}
