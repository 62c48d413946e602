// The sweep that finds webhook deliveries whose BullMQ job is gone (Redis restarted empty, its keys deleted):
// Postgres says a row is pending and handed over, the queue has no job for it. The sweep looks at every pending
// row, so it runs on its own slow cadence (WEBHOOK_SWEEP_INTERVAL_SECONDS, on the worker's clock), when the
// worker starts, and straight after the queue's Redis connection is ready again, not at every dispatch
// interval. A row lost after its whole retry window is given up with why, not sent again with fresh attempts.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Prisma } from '../../src/generated/prisma/client.js';
import { createRedisConnection } from '../../src/lib/redis-connection.js';
import { messageIdOf } from '../../src/webhooks/webhook-delivery.js';
import { needsReauth, webhookPayload } from '../../src/store/webhook-events.js';
import { retryWindowMs } from '../../src/webhooks/webhook-jobs.js';
import { createSyncHarness, type FakeClock, type SyncHarness } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { patient } from '../support/patience.js';

const SWEEP_INTERVAL_SECONDS = 60;
let h: SyncHarness;
let receiver: WebhookReceiver;
let connectionId: string;
let endpointId: string;
let sequence = 0;
const clock = () => h.clock as FakeClock;
const prisma = () => h.clients.prisma;

/**
 * A delivery row as the outbox writes it, `ageMs` old; `handedOver`: the row says its job was added to the
 * queue, and no job exists (what a Redis that lost its keys leaves).
 */
async function deliveryRow(options: { handedOver: boolean; ageMs?: number }): Promise<string> {
  const now = clock().now();
  const createdAt = new Date(now.getTime() - (options.ageMs ?? 0));
  const id = randomUUID();
  sequence += 1;
  await prisma().webhookDelivery.create({
    data: {
      id,
      endpointId,
      eventType: 'connection.needs_reauth',
      payload: webhookPayload(needsReauth({ connectionId, at: createdAt }), {
        teamId: null,
        sequence,
      }) as Prisma.InputJsonObject,
      createdAt,
      enqueuedAt: options.handedOver ? createdAt : null,
    },
  });
  return id;
}

const rowOf = (id: string) => prisma().webhookDelivery.findUniqueOrThrow({ where: { id } });
const received = (id: string) => receiver.requests.filter((r) => r.id === messageIdOf(id));

/** Waits for a dispatch pass to hand over a row written behind the worker's back (no kick): proof it ran. */
async function oneDispatchPass() {
  const id = await deliveryRow({ handedOver: false });
  await waitFor(
    () => rowOf(id),
    (row) => row.enqueuedAt !== null,
    { what: 'a dispatch pass' },
  );
}

beforeAll(async () => {
  h = await createSyncHarness('webhook_lost_job_sweep', {
    env: {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_DISPATCH_INTERVAL_MS: '100',
      WEBHOOK_SWEEP_INTERVAL_SECONDS: String(SWEEP_INTERVAL_SECONDS),
      WEBHOOK_RETRY_BASE_MS: '200',
      WEBHOOK_MAX_ATTEMPTS: '12',
    },
  });
  receiver = await startWebhookReceiver();
  const connection = await prisma().connection.create({
    data: { upstreamUserId: `usr_${randomUUID()}`, email: 'lost@example.test', timezone: 'UTC' },
  });
  connectionId = connection.id;
  const made = await h.stores.webhooks.create({ owner: { connectionId }, url: receiver.url });
  endpointId = made.endpoint.id;
  receiver.setSecret(made.secret);
}, patient(60_000));
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

describe('when the sweep runs', () => {
  it('a delivery lost before the worker started is handed over when it starts', async () => {
    const lostBefore = await deliveryRow({ handedOver: true, ageMs: 60_000 });
    await h.startRoles(['worker']);
    await waitFor(
      () => rowOf(lostBefore),
      (row) => row.deliveredAt !== null || row.givenUpAt !== null,
      { what: 'the delivery lost before start dealt with' },
    );
    expect(await rowOf(lostBefore)).toMatchObject({ deliveredAt: expect.any(Date), givenUpAt: null });
    expect(received(lostBefore)).toHaveLength(1);
  });

  it('one lost later waits for the next sweep on the worker’s clock, not the next dispatch interval', async () => {
    const lost = await deliveryRow({ handedOver: true });
    // Two dispatch passes go by (each would have swept before): the lost row is left alone.
    await oneDispatchPass();
    await oneDispatchPass();
    expect(await h.clients.webhookQueue.getJob(lost)).toBeUndefined();
    expect(received(lost)).toEqual([]);

    clock().advance(SWEEP_INTERVAL_SECONDS);
    await waitFor(
      () => rowOf(lost),
      (row) => row.deliveredAt !== null,
      { what: 'the lost delivery handed over by the sweep and delivered' },
    );
    expect(received(lost)).toHaveLength(1);
  });

  it('one lost when the queue’s Redis connection drops is handed over once it is ready again', async () => {
    const lost = await deliveryRow({ handedOver: true });
    await oneDispatchPass();
    expect(await h.clients.webhookQueue.getJob(lost)).toBeUndefined();
    // Redis drops the queue's connection (a restart, a failover); the clock does not move.
    const id = await h.clients.redis.client('ID');
    const admin = createRedisConnection(h.env.REDIS_URL!, 'command', 'test-admin');
    try {
      await admin.client('KILL', 'ID', String(id));
    } finally {
      await admin.quit();
    }
    await waitFor(
      () => rowOf(lost),
      (row) => row.deliveredAt !== null,
      { what: 'the lost delivery handed over after the reconnect and delivered' },
    );
  });
});

describe('a delivery lost after its retry window', () => {
  it('is given up with why, and not sent again; one lost within the window is sent', async () => {
    const window = retryWindowMs(h.config.webhooks);
    const tooOld = await deliveryRow({ handedOver: true, ageMs: window + 60_000 });
    const inTime = await deliveryRow({ handedOver: true, ageMs: window - 60_000 });
    clock().advance(SWEEP_INTERVAL_SECONDS);
    await waitFor(
      () => Promise.all([rowOf(tooOld), rowOf(inTime)]),
      (rows) => rows.every((row) => row.deliveredAt !== null || row.givenUpAt !== null),
      { what: 'both lost deliveries dealt with by the sweep' },
    );
    expect(await rowOf(tooOld)).toMatchObject({
      deliveredAt: null,
      givenUpAt: clock().now(),
      lastError: expect.stringMatching(/^lost from the queue after its retry window/),
    });
    expect(received(tooOld)).toEqual([]);
    expect(await rowOf(inTime)).toMatchObject({ deliveredAt: expect.any(Date), givenUpAt: null });
  });
});
