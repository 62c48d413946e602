// The delivery side of the webhook outbox: what the dispatcher hands to the queue, what one attempt reads and
// writes, the endpoint's failing streak that decides when it is disabled, and what the lost-job sweep reads.
// The rows are the truth of what is left to deliver (webhook-outbox.ts writes them); the services in
// src/webhooks decide what to do with them and when, and reach the rows only through these methods.
import type { PrismaClient } from '../generated/prisma/client.js';

/** The longest last_error kept on a row: the attempt's error or the reason it was given up. */
export const ERROR_TEXT_MAX = 300;

/** A delivery still to be attempted, with its endpoint. */
export interface DeliveryToAttempt {
  id: string;
  endpointId: string;
  eventType: string;
  /** What the receiver is sent, as JSON. */
  payload: unknown;
  url: string;
  endpointDisabled: boolean;
}

/** How one attempt went, written on its row. */
export interface AttemptRecord {
  at: Date;
  /** The receiver's status; null when it gave none (refused, timed out). */
  status: number | null;
  latencyMs: number;
  /** Null for a 2xx. */
  error: string | null;
  delivered: boolean;
}

/** Where the lost-job sweep has got to: it walks the pending rows in (created_at, id) order. */
export interface SweepCursor {
  createdAt: Date;
  id: string;
}

export interface WebhookDeliveryStore {
  /**
   * Locks up to `limit` rows not handed over yet, oldest first (rows another dispatcher holds are skipped),
   * passes their ids to `handOver` and, once it resolves, marks them handed over at `now`, all in one
   * transaction; the number handed over.
   */
  handOverNew(limit: number, now: Date, handOver: (ids: string[]) => Promise<void>): Promise<number>;
  /** The delivery with its endpoint; undefined when it is gone, delivered or given up. */
  toAttempt(deliveryId: string): Promise<DeliveryToAttempt | undefined>;
  /** Counts the attempt and writes how it went (a 2xx marks the row delivered). */
  recordAttempt(deliveryId: string, attempt: AttemptRecord): Promise<void>;
  /** When the delivery was written and delivered; undefined when it is gone. */
  deliveryTimes(deliveryId: string): Promise<{ createdAt: Date; deliveredAt: Date | null } | undefined>;
  /** Gives up a pending delivery, with `reason` as its last error when given (else the last attempt's stays). */
  giveUp(deliveryId: string, now: Date, reason?: string): Promise<void>;
  /** Ends the endpoint's failing streak, if it had one. */
  endpointSucceeded(endpointId: string): Promise<void>;
  /** Starts the endpoint's failing streak unless one is under way; when the streak began (undefined: gone). */
  endpointFailed(endpointId: string, now: Date): Promise<Date | undefined>;
  /** Disables the endpoint (unless it is already), saying why. */
  disableEndpoint(endpointId: string, now: Date, reason: string): Promise<void>;
  /** Gives up every pending delivery of the endpoint. */
  giveUpPendingOf(endpointId: string, now: Date): Promise<void>;
  /** Rows handed over but neither delivered nor given up, after `after` in (created_at, id) order. */
  handedOverPending(after: SweepCursor, limit: number): Promise<SweepCursor[]>;
  /** Those of `ids` neither delivered nor given up. */
  stillPending(ids: readonly string[]): Promise<Set<string>>;
  /** Marks those of `ids` still pending handed over (again) at `now`. */
  markHandedOver(ids: readonly string[], now: Date): Promise<void>;
}

const PENDING = { deliveredAt: null, givenUpAt: null } as const;

export function createWebhookDeliveryStore(prisma: PrismaClient): WebhookDeliveryStore {
  return {
    handOverNew(limit, now, handOver) {
      return prisma.$transaction(async (tx) => {
        // Several workers may dispatch at once: each takes rows no other holds.
        const rows = await tx.$queryRaw<{ id: string }[]>`
          SELECT id FROM webhook_delivery
          WHERE enqueued_at IS NULL AND delivered_at IS NULL AND given_up_at IS NULL
          ORDER BY created_at LIMIT ${limit}
          FOR UPDATE SKIP LOCKED`;
        if (rows.length === 0) return 0;
        const ids = rows.map((row) => row.id);
        await handOver(ids);
        await tx.webhookDelivery.updateMany({ where: { id: { in: ids } }, data: { enqueuedAt: now } });
        return rows.length;
      });
    },

    async toAttempt(deliveryId) {
      const delivery = await prisma.webhookDelivery.findUnique({
        where: { id: deliveryId },
        include: { endpoint: { select: { url: true, disabledAt: true } } },
      });
      if (!delivery || delivery.deliveredAt !== null || delivery.givenUpAt !== null) return undefined;
      return {
        id: delivery.id,
        endpointId: delivery.endpointId,
        eventType: delivery.eventType,
        payload: delivery.payload,
        url: delivery.endpoint.url,
        endpointDisabled: delivery.endpoint.disabledAt !== null,
      };
    },

    async recordAttempt(deliveryId, attempt) {
      await prisma.webhookDelivery.update({
        where: { id: deliveryId },
        data: {
          attempts: { increment: 1 },
          lastAttemptAt: attempt.at,
          lastStatus: attempt.status,
          lastLatencyMs: attempt.latencyMs,
          lastError: attempt.error?.slice(0, ERROR_TEXT_MAX) ?? null,
          ...(attempt.delivered ? { deliveredAt: attempt.at } : {}),
        },
      });
    },

    async deliveryTimes(deliveryId) {
      const row = await prisma.webhookDelivery.findUnique({
        where: { id: deliveryId },
        select: { createdAt: true, deliveredAt: true },
      });
      return row ?? undefined;
    },

    async giveUp(deliveryId, now, reason) {
      await prisma.webhookDelivery.updateMany({
        where: { id: deliveryId, ...PENDING },
        data: {
          givenUpAt: now,
          ...(reason === undefined ? {} : { lastError: reason.slice(0, ERROR_TEXT_MAX) }),
        },
      });
    },

    async endpointSucceeded(endpointId) {
      await prisma.webhookEndpoint.updateMany({
        where: { id: endpointId, failingSince: { not: null } },
        data: { failingSince: null },
      });
    },

    async endpointFailed(endpointId, now) {
      await prisma.webhookEndpoint.updateMany({
        where: { id: endpointId, failingSince: null },
        data: { failingSince: now },
      });
      const endpoint = await prisma.webhookEndpoint.findUnique({
        where: { id: endpointId },
        select: { failingSince: true },
      });
      return endpoint?.failingSince ?? undefined;
    },

    async disableEndpoint(endpointId, now, reason) {
      await prisma.webhookEndpoint.updateMany({
        where: { id: endpointId, disabledAt: null },
        data: { disabledAt: now, disabledReason: reason },
      });
    },

    async giveUpPendingOf(endpointId, now) {
      await prisma.webhookDelivery.updateMany({
        where: { endpointId, ...PENDING },
        data: { givenUpAt: now },
      });
    },

    async handedOverPending(after, limit) {
      const rows = await prisma.$queryRaw<{ id: string; created_at: Date }[]>`
        SELECT id::text, created_at FROM webhook_delivery
        WHERE delivered_at IS NULL AND given_up_at IS NULL AND enqueued_at IS NOT NULL
          AND (created_at, id) > (${after.createdAt}, ${after.id}::uuid)
        ORDER BY created_at, id LIMIT ${limit}`;
      return rows.map((row) => ({ id: row.id, createdAt: row.created_at }));
    },

    async stillPending(ids) {
      const rows = await prisma.webhookDelivery.findMany({
        where: { id: { in: [...ids] }, ...PENDING },
        select: { id: true },
      });
      return new Set(rows.map((row) => row.id));
    },

    async markHandedOver(ids, now) {
      await prisma.webhookDelivery.updateMany({
        where: { id: { in: [...ids] }, ...PENDING },
        data: { enqueuedAt: now },
      });
    },
  };
}
