// The webhook outbox: a transaction that changes something writes, in the same transaction, one delivery row
// per event and interested endpoint (the connection's own, and those of every team it is in, not disabled,
// subscribed to the event's type). The delivery queue works them off (src/webhooks/webhook-dispatcher.ts), so
// a commit's events are delivered even if the process dies right after it, and a transaction that rolls back
// sends nothing.
import { randomUUID } from 'node:crypto';
import type { Prisma } from '../generated/prisma/client.js';
import { webhookPayload, type WebhookEvent } from '../webhooks/webhook-events.js';

type Tx = Prisma.TransactionClient;

/** The ids of the deliveries written. */
export async function recordWebhookEvents(
  tx: Tx,
  connectionId: string,
  events: readonly WebhookEvent[],
  now: Date,
): Promise<string[]> {
  if (events.length === 0) return [];
  const types = [...new Set(events.map((e) => e.type))];
  const endpoints = await tx.webhookEndpoint.findMany({
    where: {
      disabledAt: null,
      events: { hasSome: types },
      OR: [{ connectionId }, { team: { members: { some: { connectionId } } } }],
    },
    select: { id: true, teamId: true, events: true },
    orderBy: { id: 'asc' },
  });
  const rows = events.flatMap((event) =>
    endpoints
      .filter((endpoint) => endpoint.events.includes(event.type))
      .map((endpoint) => ({
        id: randomUUID(),
        endpointId: endpoint.id,
        eventType: event.type,
        payload: webhookPayload(event, endpoint) as Prisma.InputJsonObject,
        createdAt: now,
      })),
  );
  if (rows.length > 0) await tx.webhookDelivery.createMany({ data: rows });
  return rows.map((row) => row.id);
}
