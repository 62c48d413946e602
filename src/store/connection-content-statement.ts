// A connection's feed content in one statement (issue 43): its declared state, current event types, open slots
// and (when asked) inferred bookings in a window, as one round trip. A single statement reads one snapshot, so it
// needs no REPEATABLE READ transaction (which cost a push BEGIN, SET TRANSACTION, one statement per table and
// COMMIT, each a round trip). The window must be known before the statement: the caller chooses it from the zone
// it expects (its token lookup's or push's read of the connection), and the statement's own read of the zone
// says whether that held (feed-content.ts reads again the long way when the zone moved in between).
import { Prisma, type PrismaClient } from '../generated/prisma/client.js';
import { pooledRows } from './pooled-rows.js';
import type { FeedConnectionState } from '../feeds/feed-inputs.js';
import type { FeedBooking, FeedEventType, FeedSlot } from '../feeds/feed-model.js';
import { CONNECTION_STATE_JSON, connectionStateOf, type ConnectionStateJson } from './feed-inputs.js';

export interface ConnectionContentRows {
  connection: FeedConnectionState;
  /** Current event types (the one named, when `upstreamEventId` is given), by upstream id then id. */
  eventTypes: (FeedEventType & { upstreamEventId: string })[];
  /** Every open slot starting in the window, of any event type, by start, event type, then id. */
  slots: FeedSlot[];
  /** Every inferred booking starting in the window, with the event types it closed slots of. */
  bookings: (FeedBooking & { eventIds: string[] })[];
}

type Stamp = string;

interface Row {
  connection: ConnectionStateJson | null;
  event_types: [string, string, number, string | null, string | null, boolean, boolean][] | null;
  slots: [string, Stamp, Stamp, number, Stamp, Stamp][] | null;
  bookings: [Stamp, Stamp, Stamp, string[]][] | null;
}

/** The content, or undefined for no such connection. */
export async function readConnectionContentRows(
  prisma: PrismaClient,
  query: { connectionId: string; upstreamEventId: string | null; withBookings: boolean },
  window: { windowStart: Date; windowEnd: Date },
): Promise<ConnectionContentRows | undefined> {
  const { connectionId, upstreamEventId, withBookings } = query;
  const [row] = await pooledRows<Row>(
    prisma,
    Prisma.sql`
    SELECT
      (SELECT ${CONNECTION_STATE_JSON} FROM "connection" c WHERE c."id" = ${connectionId}::uuid) AS "connection",
      (SELECT json_agg(json_build_array(e."upstream_event_id", e."title", e."duration_minutes", e."url", e."color",
                                        e."enabled", e."secret") ORDER BY e."upstream_event_id", e."id")
       FROM "event_type" e
       WHERE e."connection_id" = ${connectionId}::uuid AND e."valid_to" IS NULL
         AND (${upstreamEventId}::text IS NULL OR e."upstream_event_id" = ${upstreamEventId}::text)) AS "event_types",
      (SELECT json_agg(json_build_array(s."upstream_event_id", s."starts_at", s."ends_at", s."sequence",
                                        s."first_seen_at", s."last_changed_at")
                       ORDER BY s."starts_at", s."upstream_event_id", s."id")
       FROM "slot" s
       WHERE s."connection_id" = ${connectionId}::uuid AND s."gone_at" IS NULL
         AND s."starts_at" >= ${window.windowStart} AND s."starts_at" < ${window.windowEnd}) AS "slots",
      (SELECT json_agg(json_build_array(b."starts_at", b."ends_at", b."detected_at", b."event_ids")
                       ORDER BY b."starts_at", b."id")
       FROM "booking" b
       WHERE ${withBookings} AND b."connection_id" = ${connectionId}::uuid
         AND b."starts_at" >= ${window.windowStart} AND b."starts_at" < ${window.windowEnd}) AS "bookings"`,
  );
  if (!row?.connection) return undefined;
  return {
    connection: connectionStateOf(row.connection),
    eventTypes: (row.event_types ?? []).map(
      ([upstreamEventId, title, durationMinutes, url, color, enabled, secret]) => ({
        upstreamEventId,
        title,
        durationMinutes,
        url,
        color,
        enabled,
        secret,
      }),
    ),
    slots: (row.slots ?? []).map(([eventId, startsAt, endsAt, sequence, firstSeenAt, lastChangedAt]) => ({
      eventId,
      startsAt: new Date(startsAt),
      endsAt: new Date(endsAt),
      sequence,
      firstSeenAt: new Date(firstSeenAt),
      lastChangedAt: new Date(lastChangedAt),
    })),
    bookings: (row.bookings ?? []).map(([startsAt, endsAt, detectedAt, eventIds]) => ({
      startsAt: new Date(startsAt),
      endsAt: new Date(endsAt),
      detectedAt: new Date(detectedAt),
      eventIds,
    })),
  };
}
