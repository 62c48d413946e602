// The webhook outbox: a transaction that changes something writes, in the same transaction, one delivery row
// per event and interested endpoint (the connection's own, and those of every team it is in; for what one
// connection or team owns, such as a feed's CalDAV destination, the owner's own), not disabled, subscribed to
// the event's type. The delivery queue works them off (src/webhooks/webhook-queue.ts), so a commit's events are
// delivered even if the process dies right after it, and a transaction that rolls back sends nothing. Each row
// is numbered in its endpoint's sequence (webhook_endpoint.last_sequence), so receivers can order deliveries
// that arrive out of order. Numbering locks the endpoint's row until the transaction ends, and a team's endpoint
// is shared by every member's commits: callers write the outbox as their transaction's last statement, so that
// lock is held for an instant. A test event asked for (recordTestEvent) is written the same way, to the one
// endpoint tested, and from then on is a delivery like any.
import { randomUUID } from 'node:crypto';
import { Prisma } from '../generated/prisma/client.js';
import { sqlThroughPrisma, type SqlTransaction } from './pooled-transaction.js';
import { testEvent, webhookPayload, type WebhookEvent } from './webhook-events.js';

type Tx = Prisma.TransactionClient;

interface AddressedEndpoint {
  id: string;
  teamId: string | null;
  events: string[];
}

interface DeliveryRow {
  id: string;
  endpointId: string;
  eventType: string;
  payload: Prisma.InputJsonObject;
  createdAt: Date;
}

/** Which endpoints may hear an event: a condition on `webhook_endpoint e`. */
type Audience = Prisma.Sql;

/** A connection's own endpoints and those of every team it is in. */
const connectionAndItsTeams = (connectionId: string): Audience => Prisma.sql`
  (e.connection_id = ${connectionId}::uuid
   OR e.team_id IN (SELECT m.team_id FROM team_member m WHERE m.connection_id = ${connectionId}::uuid))`;

/** The owner's own endpoints only. */
const ownersOwn = (owner: { connectionId: string } | { teamId: string }): Audience =>
  'connectionId' in owner
    ? Prisma.sql`e.connection_id = ${owner.connectionId}::uuid`
    : Prisma.sql`e.team_id = ${owner.teamId}::uuid`;

/** The endpoints of `audience`, not disabled, subscribed to any of `types`, in id order. */
function endpointsHearing(
  tx: SqlTransaction,
  audience: Audience,
  types: string[],
): Promise<AddressedEndpoint[]> {
  return tx.rows<AddressedEndpoint>(Prisma.sql`
    SELECT e.id::text AS id, e.team_id::text AS "teamId", e.events FROM webhook_endpoint e
    WHERE e.disabled_at IS NULL AND e.events && ${types}::text[] AND ${audience}
    ORDER BY e.id`);
}

/** Moves the endpoint's sequence on by `count`; the last number taken, undefined when it is gone. */
async function takeSequence(
  tx: SqlTransaction,
  endpointId: string,
  count: number,
): Promise<number | undefined> {
  const [taken] = await tx.rows<{ last: string }>(Prisma.sql`
    UPDATE webhook_endpoint SET last_sequence = last_sequence + ${count}
    WHERE id = ${endpointId}::uuid RETURNING last_sequence::text AS last`);
  return taken === undefined ? undefined : Number(taken.last);
}

async function insertDeliveries(tx: SqlTransaction, rows: readonly DeliveryRow[]): Promise<void> {
  await tx.rows(Prisma.sql`
    INSERT INTO webhook_delivery (id, endpoint_id, event_type, payload, created_at)
    SELECT d.id, d.endpoint_id, d.event_type, d.payload::jsonb, d.created_at
    FROM unnest(${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.endpointId)}::uuid[],
                ${rows.map((r) => r.eventType)}::text[], ${rows.map((r) => JSON.stringify(r.payload))}::text[],
                ${rows.map((r) => r.createdAt)}::timestamptz[])
      WITH ORDINALITY AS d(id, endpoint_id, event_type, payload, created_at, n)
    ORDER BY d.n`);
}

/**
 * Events about a connection, for its own endpoints and its teams'. The ids of the deliveries written. To be
 * called last in the transaction (see above); a Prisma transaction is passed as sqlThroughPrisma(tx).
 */
export async function recordWebhookEvents(
  tx: SqlTransaction,
  connectionId: string,
  events: readonly WebhookEvent[],
  now: Date,
): Promise<string[]> {
  return writeDeliveries(tx, connectionAndItsTeams(connectionId), events, now);
}

/**
 * Events about something one connection or one team owns (a feed's CalDAV destination), for that owner's own
 * endpoints only: a team's endpoints hear nothing of a member's own feeds, nor a member's of its team's feeds.
 * The ids of the deliveries written. To be called last in the transaction (see above).
 */
export async function recordOwnerWebhookEvents(
  tx: SqlTransaction,
  owner: { connectionId: string } | { teamId: string },
  events: readonly WebhookEvent[],
  now: Date,
): Promise<string[]> {
  return writeDeliveries(tx, ownersOwn(owner), events, now);
}

/** One delivery per event and endpoint of `whose` (not disabled) subscribed to the event's type. */
async function writeDeliveries(
  tx: SqlTransaction,
  audience: Audience,
  events: readonly WebhookEvent[],
  now: Date,
): Promise<string[]> {
  if (events.length === 0) return [];
  const types = [...new Set(events.map((e) => e.type))];
  const endpoints = await endpointsHearing(tx, audience, types);
  const addressed = events.flatMap((event) =>
    endpoints
      .filter((endpoint) => endpoint.events.includes(event.type))
      .map((endpoint) => ({ event, endpoint })),
  );
  const next = await takeSequences(
    tx,
    endpoints.map((endpoint) => ({
      endpointId: endpoint.id,
      count: addressed.filter((a) => a.endpoint === endpoint).length,
    })),
  );
  const rows = addressed.flatMap(({ event, endpoint }): DeliveryRow[] => {
    const sequence = next.get(endpoint.id);
    // An endpoint deleted since it was read gets nothing.
    if (sequence === undefined) return [];
    next.set(endpoint.id, sequence + 1);
    return [
      {
        id: randomUUID(),
        endpointId: endpoint.id,
        eventType: event.type,
        payload: webhookPayload(event, { teamId: endpoint.teamId, sequence }) as Prisma.InputJsonObject,
        createdAt: now,
      },
    ];
  });
  if (rows.length > 0) await insertDeliveries(tx, rows);
  return rows.map((row) => row.id);
}

/**
 * A webhook.test for the endpoint, numbered in its sequence; the id of its delivery, undefined when there is no
 * such endpoint. Written whether the endpoint is disabled or not: testing a receiver before enabling its
 * endpoint again is what a test is for (the delivery gives it a single attempt then: webhook-delivery.ts).
 */
export async function recordTestEvent(tx: Tx, endpointId: string, now: Date): Promise<string | undefined> {
  const endpoint = await tx.webhookEndpoint.findUnique({
    where: { id: endpointId },
    select: { id: true, teamId: true, connectionId: true },
  });
  if (!endpoint) return undefined;
  const sql = sqlThroughPrisma(tx);
  const sequence = (await takeSequences(sql, [{ endpointId, count: 1 }])).get(endpointId);
  if (sequence === undefined) return undefined;
  const event = testEvent({ endpointId, connectionId: endpoint.connectionId, at: now });
  const id = randomUUID();
  await insertDeliveries(sql, [
    {
      id,
      endpointId,
      eventType: event.type,
      payload: webhookPayload(event, { teamId: endpoint.teamId, sequence }) as Prisma.InputJsonObject,
      createdAt: now,
    },
  ]);
  return id;
}

/**
 * Reserves `count` numbers of each endpoint's sequence; the first of them per endpoint. The increment locks the
 * endpoint's row until this transaction ends, so two commits writing to one endpoint number their events in
 * the order they commit (a number taken by one that rolls back is taken again by the next). Endpoints are
 * locked in id order, so commits writing to several (a connection in two teams) cannot deadlock.
 */
async function takeSequences(
  tx: SqlTransaction,
  wanted: readonly { endpointId: string; count: number }[],
): Promise<Map<string, number>> {
  const first = new Map<string, number>();
  const ordered = wanted.filter((w) => w.count > 0).sort((a, b) => (a.endpointId < b.endpointId ? -1 : 1));
  for (const { endpointId, count } of ordered) {
    const last = await takeSequence(tx, endpointId, count);
    if (last !== undefined) first.set(endpointId, last - count + 1);
  }
  return first;
}
