-- Commits ordered by pull, why each slot closed, and bookings inferred from the closes.

-- Each pull takes a ticket (pull_sequence + 1) before it starts; a commit whose ticket is older than the last
-- committed one is refused and recorded as superseded, so a late commit of an older pull cannot reopen a slot
-- that a newer pull saw booked.
ALTER TYPE "sync_outcome" ADD VALUE 'superseded';
-- A run cut short by a shutdown (a deploy): not a failure; its job goes back to the queue unspent.
ALTER TYPE "sync_outcome" ADD VALUE 'interrupted';
ALTER TABLE "connection" ADD COLUMN "pull_sequence" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "connection" ADD COLUMN "committed_pull_sequence" INTEGER NOT NULL DEFAULT 0;

-- Why a slot closed (NULL while it is open).
CREATE TYPE "slot_close_reason" AS ENUM ('taken', 'event_type_disabled', 'event_type_removed', 'passed', 'window_moved', 'unknown');
ALTER TABLE "slot" ADD COLUMN "close_reason" "slot_close_reason";

-- Existing closes, best effort from the history kept: started before it closed → passed; its event type's
-- version at the close was disabled → event_type_disabled; it had no version left → event_type_removed;
-- otherwise it vanished before it started with its event type enabled → taken. (window_moved cannot be told
-- apart from history: the horizon a past sync pulled is not stored.)
UPDATE "slot" s SET "close_reason" = CASE
    WHEN s."gone_at" >= s."starts_at" THEN 'passed'::"slot_close_reason"
    WHEN NOT EXISTS (
      SELECT 1 FROM "event_type" e
      WHERE e."connection_id" = s."connection_id" AND e."upstream_event_id" = s."upstream_event_id"
        AND e."valid_from" <= s."gone_at" AND (e."valid_to" IS NULL OR e."valid_to" > s."gone_at")
    ) THEN 'event_type_removed'::"slot_close_reason"
    WHEN EXISTS (
      SELECT 1 FROM "event_type" e
      WHERE e."connection_id" = s."connection_id" AND e."upstream_event_id" = s."upstream_event_id"
        AND e."valid_from" <= s."gone_at" AND (e."valid_to" IS NULL OR e."valid_to" > s."gone_at")
        AND NOT e."enabled"
    ) THEN 'event_type_disabled'::"slot_close_reason"
    ELSE 'taken'::"slot_close_reason"
  END
WHERE s."gone_at" IS NOT NULL;

-- A booking, inferred: a maximal interval that became unavailable in one sync. The slots taken in that sync
-- (of every event type) are merged where they overlap; what is still covered by a slot open after the sync is
-- not booked (a 30-minute booking removes a 60-minute slot that overlaps it, but the 30-minute slot next to it
-- stays open); each piece left is one booking.
CREATE TABLE "booking" (
    "id" BIGSERIAL NOT NULL,
    "connection_id" UUID NOT NULL,
    -- The sync that first saw it: the booking happened between that sync and the one before.
    "detected_at" TIMESTAMPTZ(3) NOT NULL,
    "starts_at" TIMESTAMPTZ(3) NOT NULL,
    "ends_at" TIMESTAMPTZ(3) NOT NULL,
    -- Event types whose slots it closed.
    "event_ids" TEXT[] NOT NULL,
    "slots_closed" INTEGER NOT NULL,

    CONSTRAINT "booking_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "booking_connection_id_detected_at_idx" ON "booking"("connection_id", "detected_at");
CREATE INDEX "booking_detected_at_idx" ON "booking"("detected_at");
ALTER TABLE "booking" ADD CONSTRAINT "booking_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The one definition of a booking, used by every sync commit and by the backfill below.
CREATE FUNCTION "slotfeed_inferred_bookings"(p_connection_id UUID, p_detected_at TIMESTAMPTZ)
RETURNS TABLE ("starts_at" TIMESTAMPTZ, "ends_at" TIMESTAMPTZ, "event_ids" TEXT[], "slots_closed" INTEGER)
LANGUAGE sql STABLE AS $$
  WITH taken AS (
    SELECT s."upstream_event_id", tstzrange(s."starts_at", s."ends_at") AS span
    FROM "slot" s
    WHERE s."connection_id" = p_connection_id AND s."gone_at" = p_detected_at AND s."close_reason" = 'taken'
  ), still_open AS (
    SELECT range_agg(tstzrange(s."starts_at", s."ends_at")) AS spans
    FROM "slot" s
    WHERE s."connection_id" = p_connection_id
      AND s."first_seen_at" <= p_detected_at AND (s."gone_at" IS NULL OR s."gone_at" > p_detected_at)
      AND s."starts_at" < (SELECT max(upper(span)) FROM taken)
      AND s."ends_at" > (SELECT min(lower(span)) FROM taken)
  ), pieces AS (
    SELECT unnest(
      (SELECT range_agg(span) FROM taken) - COALESCE((SELECT spans FROM still_open), '{}'::tstzmultirange)
    ) AS piece
  )
  SELECT lower(p.piece), upper(p.piece),
         array_agg(DISTINCT t."upstream_event_id" ORDER BY t."upstream_event_id"), count(*)::int
  FROM pieces p JOIN taken t ON t.span && p.piece
  WHERE NOT isempty(p.piece)
  GROUP BY p.piece
  ORDER BY lower(p.piece)
$$;

INSERT INTO "booking" ("connection_id", "detected_at", "starts_at", "ends_at", "event_ids", "slots_closed")
SELECT d."connection_id", d."gone_at", b."starts_at", b."ends_at", b."event_ids", b."slots_closed"
FROM (SELECT DISTINCT "connection_id", "gone_at" FROM "slot" WHERE "close_reason" = 'taken') d,
     LATERAL "slotfeed_inferred_bookings"(d."connection_id", d."gone_at") b;
