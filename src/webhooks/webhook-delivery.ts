// One attempt at delivering one webhook: the payload as JSON, signed per the Standard Webhooks specification
// (the `standardwebhooks` package: webhook-id, webhook-timestamp, webhook-signature "v1,<HMAC-SHA256>"), POSTed
// with a timeout, redirects not followed. The attempt is recorded on the delivery row (status, latency, error,
// attempts); a 2xx marks it delivered and clears the endpoint's failing streak. Anything else is a failure: the
// queue retries it with exponential backoff, until the endpoint has failed for WEBHOOK_DISABLE_AFTER_SECONDS (a
// day), when the endpoint is disabled and its pending deliveries given up.
import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import type { PrismaClient } from '../generated/prisma/client.js';
import { coerceError } from '../lib/coerce-error.js';
import { deliveryAgent } from './target-policy.js';

export interface WebhookDeliverySettings {
  timeoutMs: number;
  allowPrivateTargets: boolean;
  /** An endpoint failing for this long is disabled. */
  disableAfterSeconds: number;
}

export interface WebhookDeliveryDeps {
  prisma: PrismaClient;
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
const ERROR_TEXT_MAX = 300;

interface PostResult {
  status?: number;
  error?: string;
}

function post(url: string, body: string, headers: Record<string, string>, settings: WebhookDeliverySettings) {
  return new Promise<PostResult>((resolve) => {
    const target = new URL(url);
    const client = target.protocol === 'https:' ? https : http;
    let agent: ReturnType<typeof deliveryAgent>;
    try {
      agent = deliveryAgent(url, { allowPrivate: settings.allowPrivateTargets });
    } catch (refused: unknown) {
      resolve({ error: coerceError(refused).message });
      return;
    }
    const request = client.request(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        timeout: settings.timeoutMs,
        ...(agent ? { agent } : {}),
      },
      (response) => {
        // The body is not read for anything: drained so the socket can be reused.
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0 }));
        response.on('error', (error) => resolve({ status: response.statusCode ?? 0, error: error.message }));
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${settings.timeoutMs} ms`)));
    request.on('error', (error) => resolve({ error: error.message }));
    request.end(body);
  });
}

export async function attemptDelivery(
  deps: WebhookDeliveryDeps,
  deliveryId: string,
): Promise<DeliveryOutcome> {
  const { prisma } = deps;
  const delivery = await prisma.webhookDelivery.findUnique({
    where: { id: deliveryId },
    include: { endpoint: { select: { id: true, url: true, disabledAt: true } } },
  });
  if (!delivery || delivery.deliveredAt !== null || delivery.givenUpAt !== null) return 'already-done';
  if (delivery.endpoint.disabledAt !== null) {
    await prisma.webhookDelivery.updateMany({
      where: { id: deliveryId, deliveredAt: null, givenUpAt: null },
      data: { givenUpAt: deps.now(), lastError: 'the endpoint is disabled' },
    });
    return 'disabled';
  }
  const body = JSON.stringify(delivery.payload);
  const messageId = messageIdOf(delivery.id);
  const sentAt = (deps.wallClock ?? (() => new Date()))();
  const signature = new Webhook(await deps.secretOf(delivery.endpointId)).sign(messageId, sentAt, body);
  const started = performance.now();
  const result = await post(
    delivery.endpoint.url,
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
    : (
        result.error ??
        `answered ${result.status}${result.status && result.status < 400 ? ' (redirects are not followed)' : ''}`
      ).slice(0, ERROR_TEXT_MAX);
  await prisma.webhookDelivery.update({
    where: { id: deliveryId },
    data: {
      attempts: { increment: 1 },
      lastAttemptAt: now,
      lastStatus: result.status ?? null,
      lastLatencyMs: latencyMs,
      lastError: error,
      ...(ok ? { deliveredAt: now } : {}),
    },
  });
  if (ok) {
    await prisma.webhookEndpoint.updateMany({
      where: { id: delivery.endpointId, failingSince: { not: null } },
      data: { failingSince: null },
    });
    return 'delivered';
  }
  return (await noteFailure(deps, delivery.endpointId, now)) ? 'disabled' : 'failed';
}

/** Starts or continues the endpoint's failing streak; true when it has now lasted long enough to disable it. */
async function noteFailure(deps: WebhookDeliveryDeps, endpointId: string, now: Date): Promise<boolean> {
  const { prisma } = deps;
  await prisma.webhookEndpoint.updateMany({
    where: { id: endpointId, failingSince: null },
    data: { failingSince: now },
  });
  const endpoint = await prisma.webhookEndpoint.findUnique({
    where: { id: endpointId },
    select: { failingSince: true },
  });
  const since = endpoint?.failingSince;
  if (!since || now.getTime() - since.getTime() < deps.settings.disableAfterSeconds * 1000) return false;
  const hours = Math.round((now.getTime() - since.getTime()) / 3_600_000);
  // Two statements, not one transaction: the endpoint's row is what every commit writing to it locks to take
  // its sequence numbers (webhook-outbox.ts), so it is not held while thousands of pending rows are given up.
  // A delivery the second statement misses (written meanwhile, or left by a crash in between) is given up
  // when it is attempted: its endpoint is disabled.
  await prisma.webhookEndpoint.updateMany({
    where: { id: endpointId, disabledAt: null },
    data: {
      disabledAt: now,
      disabledReason: `every delivery failed for ${hours} h (since ${since.toISOString()}); fix the receiver, then enable it again`,
    },
  });
  await prisma.webhookDelivery.updateMany({
    where: { endpointId, deliveredAt: null, givenUpAt: null },
    data: { givenUpAt: now },
  });
  return true;
}

/**
 * The queue gave up on a delivery: its retries are spent (the last attempt's error says why), or `reason`, when
 * it is something else.
 */
export async function giveUp(
  prisma: PrismaClient,
  deliveryId: string,
  now: Date,
  reason?: string,
): Promise<void> {
  await prisma.webhookDelivery.updateMany({
    where: { id: deliveryId, deliveredAt: null, givenUpAt: null },
    data: { givenUpAt: now, ...(reason === undefined ? {} : { lastError: reason.slice(0, ERROR_TEXT_MAX) }) },
  });
}
