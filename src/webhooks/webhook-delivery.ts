// One attempt at delivering one webhook: the payload as JSON, signed per the Standard Webhooks specification
// (the `standardwebhooks` package: webhook-id, webhook-timestamp, webhook-signature "v1,<HMAC-SHA256>"), POSTed
// with a timeout, redirects not followed. The attempt is recorded on the delivery row (status, latency, error,
// attempts); a 2xx marks it delivered and clears the endpoint's failing streak. Anything else is a failure: the
// queue retries it with exponential backoff, until the endpoint has failed for WEBHOOK_DISABLE_AFTER_SECONDS (a
// day), when the endpoint is disabled and its pending deliveries given up. A disabled endpoint gets nothing but
// the test events someone asks for, one attempt each: how a receiver is checked before its endpoint is enabled
// again, without a day of retries to a receiver that is still broken.
import http, { type Agent } from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import { coerceError } from '../lib/coerce-error.js';
import { closedWhileKept, STALE_CONNECTION_RETRIES } from '../lib/keep-alive-agents.js';
import type { WebhookDeliveryStore } from '../store/webhook-deliveries.js';
import { WEBHOOK_TEST_EVENT } from '../store/webhook-events.js';
import { deliveryAgent } from './target-policy.js';

export interface WebhookDeliverySettings {
  timeoutMs: number;
  allowPrivateTargets: boolean;
  /** An endpoint failing for this long is disabled. */
  disableAfterSeconds: number;
}

export interface WebhookDeliveryDeps {
  deliveries: WebhookDeliveryStore;
  secretOf(endpointId: string): Promise<string>;
  /** Business time: failing streaks, disabling, the rows' times (injectable in tests). */
  now: () => Date;
  /** Wall time for webhook-timestamp: receivers reject signatures from too far in the past or future. */
  wallClock?: () => Date;
  settings: WebhookDeliverySettings;
}

export type DeliveryOutcome = 'delivered' | 'failed' | 'disabled' | 'already-done';

/** The webhook-id of a delivery: the same on every attempt, so receivers can drop repeats. */
export const messageIdOf = (deliveryId: string) => `msg_${deliveryId.replaceAll('-', '')}`;

const USER_AGENT = 'slotfeed-webhooks/1';

interface PostResult {
  status?: number;
  error?: string;
}

/** One POST of a delivery; never throws (a failure is the result's error). */
function postOnce(
  target: URL,
  agent: Agent,
  body: string,
  headers: Record<string, string>,
  settings: WebhookDeliverySettings,
) {
  return new Promise<PostResult & { staleConnection?: boolean }>((resolve) => {
    const client = target.protocol === 'https:' ? https : http;
    let answering = false;
    const request = client.request(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        timeout: settings.timeoutMs,
        agent,
      },
      (response) => {
        answering = true;
        // The body is not read for anything: drained so the socket can be reused.
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0 }));
        response.on('error', (error) => resolve({ status: response.statusCode ?? 0, error: error.message }));
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${settings.timeoutMs} ms`)));
    request.on('error', (error) =>
      resolve({ error: error.message, staleConnection: closedWhileKept(request, answering, error) }),
    );
    request.end(body);
  });
}

/**
 * Posts a delivery. Sent again when it went out on a kept connection the receiver had closed meanwhile (it got no
 * answer, and most likely never reached the receiver): deliveries are at least once anyway, their webhook-id the
 * same every time.
 */
export async function postDelivery(
  url: string,
  body: string,
  headers: Record<string, string>,
  settings: WebhookDeliverySettings,
): Promise<PostResult> {
  let agent: Agent;
  try {
    agent = deliveryAgent(url, { allowPrivate: settings.allowPrivateTargets });
  } catch (refused: unknown) {
    return { error: coerceError(refused).message };
  }
  const target = new URL(url);
  for (let retries = 0; ; retries++) {
    const { status, error, staleConnection } = await postOnce(target, agent, body, headers, settings);
    if (!staleConnection || retries >= STALE_CONNECTION_RETRIES) return { status, error };
  }
}

export async function attemptDelivery(
  deps: WebhookDeliveryDeps,
  deliveryId: string,
): Promise<DeliveryOutcome> {
  const { deliveries } = deps;
  const delivery = await deliveries.toAttempt(deliveryId);
  if (!delivery) return 'already-done';
  if (delivery.endpointDisabled && delivery.eventType !== WEBHOOK_TEST_EVENT) {
    await deliveries.giveUp(deliveryId, deps.now(), 'the endpoint is disabled');
    return 'disabled';
  }
  const body = JSON.stringify(delivery.payload);
  const messageId = messageIdOf(delivery.id);
  const sentAt = (deps.wallClock ?? (() => new Date()))();
  const signature = new Webhook(await deps.secretOf(delivery.endpointId)).sign(messageId, sentAt, body);
  const started = performance.now();
  const result = await postDelivery(
    delivery.url,
    body,
    {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': messageId,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': signature,
    },
    deps.settings,
  );
  const latencyMs = Math.round(performance.now() - started);
  const now = deps.now();
  const ok = result.status !== undefined && result.status >= 200 && result.status < 300;
  const error = ok
    ? null
    : (result.error ??
      `answered ${result.status}${result.status && result.status < 400 ? ' (redirects are not followed)' : ''}`);
  await deliveries.recordAttempt(deliveryId, {
    at: now,
    status: result.status ?? null,
    latencyMs,
    error,
    delivered: ok,
  });
  if (ok) {
    await deliveries.endpointSucceeded(delivery.endpointId);
    return 'delivered';
  }
  if (delivery.endpointDisabled) {
    // A test of a disabled endpoint: its one attempt is logged; the endpoint's streak is over already.
    await deliveries.giveUp(deliveryId, now);
    return 'disabled';
  }
  return (await noteFailure(deps, delivery.endpointId, now)) ? 'disabled' : 'failed';
}

/** Starts or continues the endpoint's failing streak; true when it has now lasted long enough to disable it. */
async function noteFailure(deps: WebhookDeliveryDeps, endpointId: string, now: Date): Promise<boolean> {
  const since = await deps.deliveries.endpointFailed(endpointId, now);
  if (!since || now.getTime() - since.getTime() < deps.settings.disableAfterSeconds * 1000) return false;
  const hours = Math.round((now.getTime() - since.getTime()) / 3_600_000);
  // Two statements, not one transaction: the endpoint's row is what every commit writing to it locks to take
  // its sequence numbers (webhook-outbox.ts), so it is not held while thousands of pending rows are given up.
  // A delivery the second statement misses (written meanwhile, or left by a crash in between) is given up
  // when it is attempted: its endpoint is disabled.
  await deps.deliveries.disableEndpoint(
    endpointId,
    now,
    `every delivery failed for ${hours} h (since ${since.toISOString()}); fix the receiver, then enable it again`,
  );
  await deps.deliveries.giveUpPendingOf(endpointId, now);
  return true;
}
