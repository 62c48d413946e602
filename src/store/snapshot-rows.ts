// The rows of a sync's commit: what it reads of the connection's current state for the planner, and how it
// writes the plan (plan-commit.ts) the planner returns. Called inside the commit's transaction (snapshots.ts),
// under the connection's lock; no decisions here. Raw statements, run past Prisma (pooled-transaction.ts): each
// kind of write is one statement whatever its size, arrays bound as parameters and unnested in SQL, JSON bound
// as its text.
import { Prisma } from '../generated/prisma/client.js';
import type { CommitPlan, CommitPrevious } from './commit-plan.js';
import type { SqlTransaction } from './pooled-transaction.js';
import { readPullCoverage } from './pull-coverage.js';

type Tx = SqlTransaction;

/** The connection's current versions and open slots, as the planner reads them. */
export async function readPrevious(
  tx: Tx,
  connectionId: string,
  storedCoverage: unknown,
): Promise<CommitPrevious> {
  // One round trip for the four reads, each a statement of its own before (a sync's most common commit changes
  // nothing, and its round trips are most of its Postgres cost). Each row comes as a JSON array of its columns,
  // ids as text (JSON has no 64-bit integers).
  const [current] = await tx.rows<{
    profile: [string, string] | null;
    event_types: [string, string, string, boolean][];
    overviews: [string, string, string, string][];
    open_slots: [string, string, string, string, number][];
  }>(Prisma.sql`
    SELECT
      (SELECT json_build_array(id::text, content_hash) FROM profile
        WHERE connection_id = ${connectionId}::uuid AND valid_to IS NULL LIMIT 1) AS profile,
      (SELECT coalesce(json_agg(json_build_array(id::text, content_hash, upstream_event_id, enabled)), '[]')
        FROM event_type WHERE connection_id = ${connectionId}::uuid AND valid_to IS NULL) AS event_types,
      (SELECT coalesce(json_agg(json_build_array(id::text, content_hash, upstream_event_id, band)), '[]')
        FROM overview WHERE connection_id = ${connectionId}::uuid AND valid_to IS NULL) AS overviews,
      (SELECT coalesce(json_agg(json_build_array(id::text, upstream_event_id, starts_at, ends_at, sequence)), '[]')
        FROM slot WHERE connection_id = ${connectionId}::uuid AND gone_at IS NULL) AS open_slots`);
  const { profile, event_types: eventTypes, overviews, open_slots: openSlots } = current!;
  return {
    profile: profile && { id: BigInt(profile[0]), contentHash: profile[1] },
    eventTypes: eventTypes.map(([id, contentHash, upstreamEventId, enabled]) => ({
      id: BigInt(id),
      contentHash,
      upstreamEventId,
      enabled,
    })),
    overviews: overviews.map(([id, contentHash, upstreamEventId, band]) => ({
      id: BigInt(id),
      contentHash,
      upstreamEventId,
      band,
    })),
    openSlots: openSlots.map(([id, eventId, startsAt, endsAt, sequence]) => ({
      id: BigInt(id),
      eventId,
      startsAt: new Date(startsAt),
      endsAt: new Date(endsAt),
      sequence,
    })),
    pullCoverage: readPullCoverage(storedCoverage),
  };
}

/** Closes the current versions `ids` of one kind (profile, event_type, overview). */
async function closeVersions(tx: Tx, table: 'profile' | 'event_type' | 'overview', ids: bigint[], now: Date) {
  if (ids.length === 0) return;
  await tx.rows(Prisma.sql`
    UPDATE ${Prisma.raw(table)} SET valid_to = ${now} WHERE id = ANY(${ids.map(String)}::bigint[])`);
}

/** Writes the plan's versions and slot changes; returns the bookings inferred from the slots closed as taken. */
export async function writeSnapshotRows(tx: Tx, connectionId: string, plan: CommitPlan, now: Date) {
  const json = (values: readonly { payload: unknown }[]) => values.map((v) => JSON.stringify(v.payload));
  await closeVersions(tx, 'profile', plan.profile.close, now);
  const profiles = plan.profile.create;
  if (profiles.length > 0) {
    await tx.rows(Prisma.sql`
      INSERT INTO profile (connection_id, content_hash, payload, valid_from)
      SELECT ${connectionId}::uuid, p.content_hash, p.payload::jsonb, ${now}
      FROM unnest(${profiles.map((p) => p.contentHash)}::text[], ${json(profiles)}::text[])
        WITH ORDINALITY AS p(content_hash, payload, n)
      ORDER BY p.n`);
  }
  await closeVersions(tx, 'event_type', plan.eventTypes.close, now);
  const eventTypes = plan.eventTypes.create;
  if (eventTypes.length > 0) {
    await tx.rows(Prisma.sql`
      INSERT INTO event_type (connection_id, upstream_event_id, title, duration_minutes, enabled, secret, url, color,
                              content_hash, payload, valid_from)
      SELECT ${connectionId}::uuid, e.upstream_event_id, e.title, e.duration_minutes, e.enabled, e.secret, e.url,
             e.color, e.content_hash, e.payload::jsonb, ${now}
      FROM unnest(${eventTypes.map((e) => e.upstreamEventId)}::text[], ${eventTypes.map((e) => e.title)}::text[],
                  ${eventTypes.map((e) => e.durationMinutes)}::int[], ${eventTypes.map((e) => e.enabled)}::bool[],
                  ${eventTypes.map((e) => e.secret)}::bool[], ${eventTypes.map((e) => e.url)}::text[],
                  ${eventTypes.map((e) => e.color)}::text[], ${eventTypes.map((e) => e.contentHash)}::text[],
                  ${json(eventTypes)}::text[])
        WITH ORDINALITY AS e(upstream_event_id, title, duration_minutes, enabled, secret, url, color, content_hash,
                             payload, n)
      ORDER BY e.n`);
  }
  await closeVersions(tx, 'overview', plan.overviews.close, now);
  const overviews = plan.overviews.create;
  if (overviews.length > 0) {
    await tx.rows(Prisma.sql`
      INSERT INTO overview (connection_id, upstream_event_id, band, content_hash, payload, valid_from)
      SELECT ${connectionId}::uuid, o.upstream_event_id, o.band, o.content_hash, o.payload::jsonb, ${now}
      FROM unnest(${overviews.map((o) => o.upstreamEventId)}::text[], ${overviews.map((o) => o.band)}::text[],
                  ${overviews.map((o) => o.contentHash)}::text[], ${json(overviews)}::text[])
        WITH ORDINALITY AS o(upstream_event_id, band, content_hash, payload, n)
      ORDER BY o.n`);
  }
  return writeSlotChanges(tx, connectionId, plan, now);
}

async function writeSlotChanges(tx: Tx, connectionId: string, plan: CommitPlan, now: Date) {
  const { open, close, reschedule } = plan.slots;
  // One statement per kind of change, whatever its size: arrays bound as parameters and unnested in SQL.
  // Prisma's createMany binds 6 parameters a row (a 10,000-slot first sync is 60,000), updateMany one per
  // id, and update runs one statement a row.
  if (close.length > 0) {
    await tx.rows(Prisma.sql`
      UPDATE slot SET gone_at = ${now}, close_reason = c.reason::slot_close_reason
      FROM unnest(${close.map((c) => c.id)}::bigint[], ${close.map((c) => c.reason)}::text[]) AS c(id, reason)
      WHERE slot.id = c.id AND slot.connection_id = ${connectionId}::uuid`);
  }
  if (open.length > 0) {
    await tx.rows(Prisma.sql`
      INSERT INTO slot (connection_id, upstream_event_id, starts_at, ends_at, first_seen_at, last_changed_at)
      SELECT ${connectionId}::uuid, o.event_id, o.starts_at, o.ends_at, ${now}, ${now}
      FROM unnest(${open.map((slot) => slot.eventId)}::text[],
                  ${open.map((slot) => slot.startsAt)}::timestamptz[],
                  ${open.map((slot) => slot.endsAt)}::timestamptz[]) AS o(event_id, starts_at, ends_at)`);
  }
  if (reschedule.length > 0) {
    await tx.rows(Prisma.sql`
      UPDATE slot SET ends_at = m.ends_at, sequence = m.sequence, last_changed_at = ${now}
      FROM unnest(${reschedule.map((moved) => moved.id)}::bigint[],
                  ${reschedule.map((moved) => moved.endsAt)}::timestamptz[],
                  ${reschedule.map((moved) => moved.sequence)}::int[]) AS m(id, ends_at, sequence)
      WHERE slot.id = m.id AND slot.connection_id = ${connectionId}::uuid`);
  }
  if (!plan.infersBookings) return [];
  // After every slot write: what a booking is (the still-open slots included) is defined once, in SQL.
  const bookings = await tx.rows<{ starts_at: Date; ends_at: Date; event_ids: string[] }>(Prisma.sql`
    INSERT INTO booking (connection_id, detected_at, starts_at, ends_at, event_ids, slots_closed)
    SELECT ${connectionId}::uuid, ${now}, b.starts_at, b.ends_at, b.event_ids, b.slots_closed
    FROM slotfeed_inferred_bookings(${connectionId}::uuid, ${now}) b
    RETURNING starts_at, ends_at, event_ids`);
  return bookings.map((b) => ({ startsAt: b.starts_at, endsAt: b.ends_at, eventIds: b.event_ids }));
}
