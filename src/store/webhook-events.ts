// What slotfeed tells webhook endpoints, as plain data (no I/O). Payloads follow the Standard Webhooks shape:
// `type`, `timestamp` (ISO 8601, when it happened) and `data`, plus `version`, which moves only when a payload's
// meaning changes (new fields may appear within a version), and `sequence`, the event's number among those of its
// endpoint (deliveries are retried independently and may arrive out of order). They stay small: ids and
// intervals, never names of bookers (slotfeed knows none) nor e-mail addresses. Declared in store/: the outbox
// (webhook-outbox.ts) writes these payloads, and the store imports nothing of the services above it.
import type { Interval } from '../feeds/busy-blocks.js';
import { unionOf } from '../feeds/busy-blocks.js';

/** The events an endpoint subscribes to: what the pages, the CLI and the store offer and accept. */
export const WEBHOOK_EVENT_TYPES = [
  'availability.changed',
  'booking.inferred',
  'connection.needs_reauth',
  'destination.needs_credentials',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
export const WEBHOOK_PAYLOAD_VERSION = 1;

/**
 * The event sent when someone asks for a test ("Send test event", `slotfeed webhooks test`), to check a
 * receiver: signed, numbered, queued, retried and logged like any. It is not one of WEBHOOK_EVENT_TYPES, so no
 * endpoint can subscribe to it (nor receive it for a change): every endpoint gets it when a test is asked for,
 * and only then.
 */
export const WEBHOOK_TEST_EVENT = 'webhook.test';
/** Every type a receiver may be sent. */
export type DeliveredEventType = WebhookEventType | typeof WEBHOOK_TEST_EVENT;

export interface SlotChange {
  eventId: string;
  startsAt: Date;
  endsAt: Date;
}

/** One event about one connection, before it is addressed to endpoints (the outbox adds a team's id). */
export interface WebhookEvent<Type extends DeliveredEventType = WebhookEventType> {
  type: Type;
  at: Date;
  data: Record<string, unknown>;
}

const iso = (d: Date) => d.toISOString();
const later = (a: Date, b: Date) => (b.getTime() > a.getTime() ? b : a);

/** Touching or overlapping slots of one event type joined: "10:00–11:30 opened", not three half hours. */
function intervalsOf(slots: readonly SlotChange[]): { start: string; end: string }[] {
  const joined = unionOf<Interval>(
    slots.map((s) => ({ startsAt: s.startsAt, endsAt: s.endsAt })),
    (a, b) => ({ startsAt: a.startsAt, endsAt: later(a.endsAt, b.endsAt) }),
  );
  return joined.map((i) => ({ start: iso(i.startsAt), end: iso(i.endsAt) }));
}

/**
 * availability.changed: per event type, the intervals that opened and closed in one sync. A slot whose end
 * moved counts as closed at its old end and opened at its new one. Nothing when nothing changed.
 */
export function availabilityChanged(input: {
  connectionId: string;
  at: Date;
  opened: readonly SlotChange[];
  closed: readonly SlotChange[];
}): WebhookEvent | undefined {
  if (input.opened.length + input.closed.length === 0) return undefined;
  const eventIds = [...new Set([...input.opened, ...input.closed].map((s) => s.eventId))].sort();
  return {
    type: 'availability.changed',
    at: input.at,
    data: {
      connectionId: input.connectionId,
      eventTypes: eventIds.map((eventTypeId) => ({
        eventTypeId,
        opened: intervalsOf(input.opened.filter((s) => s.eventId === eventTypeId)),
        closed: intervalsOf(input.closed.filter((s) => s.eventId === eventTypeId)),
      })),
    },
  };
}

/** booking.inferred: one event per booking slotfeed inferred (time that became unavailable). */
export function bookingsInferred(input: {
  connectionId: string;
  at: Date;
  bookings: readonly { startsAt: Date; endsAt: Date; eventIds: string[] }[];
}): WebhookEvent[] {
  return input.bookings.map((b) => ({
    type: 'booking.inferred',
    at: input.at,
    data: {
      connectionId: input.connectionId,
      booking: { start: iso(b.startsAt), end: iso(b.endsAt), eventTypeIds: [...b.eventIds].sort() },
    },
  }));
}

export function needsReauth(input: { connectionId: string; at: Date }): WebhookEvent {
  return { type: 'connection.needs_reauth', at: input.at, data: { connectionId: input.connectionId } };
}

/**
 * destination.needs_credentials: a CalDAV destination's server refused its credentials, so nothing is pushed to
 * it until someone replaces them. Sent once per change into that state, to the endpoints of the feed's owner:
 * its connection's (with `connectionId`), or its team's (the team's id is added as for every team endpoint).
 * `reason` is the destination's last error, which never holds a password.
 */
export function destinationNeedsCredentials(input: {
  destinationId: string;
  feedId: string;
  connectionId: string | null;
  reason: string;
  at: Date;
}): WebhookEvent {
  return {
    type: 'destination.needs_credentials',
    at: input.at,
    data: {
      destinationId: input.destinationId,
      feedId: input.feedId,
      ...(input.connectionId === null ? {} : { connectionId: input.connectionId }),
      reason: input.reason,
    },
  };
}

/**
 * webhook.test: which endpoint was tested and, for a connection's endpoint, the connection (a team's gets its
 * team's id as every event of a team's endpoint does).
 */
export function testEvent(input: {
  endpointId: string;
  connectionId: string | null;
  at: Date;
}): WebhookEvent<typeof WEBHOOK_TEST_EVENT> {
  return {
    type: WEBHOOK_TEST_EVENT,
    at: input.at,
    data: {
      ...(input.connectionId === null ? {} : { connectionId: input.connectionId }),
      endpointId: input.endpointId,
    },
  };
}

/**
 * The body an endpoint receives: the event, addressed (a team's endpoint learns which team it is about) and
 * numbered in its endpoint's sequence.
 */
export function webhookPayload(
  event: WebhookEvent<DeliveredEventType>,
  address: { teamId: string | null; sequence: number },
) {
  return {
    type: event.type,
    version: WEBHOOK_PAYLOAD_VERSION,
    timestamp: iso(event.at),
    sequence: address.sequence,
    data: address.teamId === null ? event.data : { teamId: address.teamId, ...event.data },
  };
}
