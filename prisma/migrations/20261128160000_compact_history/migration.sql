-- Compact history (issue 43): what the reports read of past days, kept in the form they read it, one row per
-- connection and UTC day in place of a row per slot or per sync run (src/store/history-compaction.ts). The
-- arrays of one row are parallel: element i of each is one slot (or run), ordered by start. Lossless for every
-- figure a report reads, so every report answers the same (test/reports/compact-history.test.ts).
--
-- slot_history: slots closed before a day that is over, by the UTC day they start on. Times are milliseconds:
-- start_ms after the day's UTC midnight, length_ms the slot's length, seen_ms and gone_ms from its start to when
-- it was first seen and when it closed (negative: before it started). Kept: what reports read (event type,
-- start, end, first seen, gone, why); not kept: the row id, SEQUENCE and last change, which only feeds read, and
-- feeds show open slots. The bounds let a report skip the rows whose slots cannot be in its range.
CREATE TABLE "slot_history" (
    "connection_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "first_seen_from" TIMESTAMPTZ(3) NOT NULL,
    "first_seen_until" TIMESTAMPTZ(3) NOT NULL,
    "gone_until" TIMESTAMPTZ(3) NOT NULL,
    "upstream_event_id" TEXT[] NOT NULL,
    "start_ms" INTEGER[] NOT NULL,
    "length_ms" INTEGER[] NOT NULL,
    "seen_ms" BIGINT[] NOT NULL,
    "gone_ms" BIGINT[] NOT NULL,
    "close_reason" "slot_close_reason"[] NOT NULL,
    CONSTRAINT "slot_history_pkey" PRIMARY KEY ("connection_id", "day")
);
CREATE INDEX "slot_history_day_idx" ON "slot_history"("day");
CREATE INDEX "slot_history_gone_until_idx" ON "slot_history"("gone_until");
ALTER TABLE "slot_history" ADD CONSTRAINT "slot_history_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- sync_run_history: finished sync runs of days that are over, by the UTC day they started on: start (ms after
-- midnight), duration (ms), outcome, upstream calls, error; the slot changes their successful runs stored, with
-- their staleness bounds (one element per band and bound, with its run's start); the day's calls per endpoint.
CREATE TABLE "sync_run_history" (
    "connection_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "started_ms" INTEGER[] NOT NULL,
    "duration_ms" INTEGER[] NOT NULL,
    "outcome" "sync_outcome"[] NOT NULL,
    "upstream_calls" INTEGER[] NOT NULL,
    "error_code" TEXT[] NOT NULL,
    "error_message" TEXT[] NOT NULL,
    "stale_started_ms" INTEGER[] NOT NULL,
    "stale_band" TEXT[] NOT NULL,
    "stale_bound_seconds" DOUBLE PRECISION[] NOT NULL,
    "stale_changes" INTEGER[] NOT NULL,
    "calls_by_endpoint" JSONB NOT NULL DEFAULT '{}',
    CONSTRAINT "sync_run_history_pkey" PRIMARY KEY ("connection_id", "day")
);
CREATE INDEX "sync_run_history_day_idx" ON "sync_run_history"("day");
ALTER TABLE "sync_run_history" ADD CONSTRAINT "sync_run_history_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Moves the slots of `connections` that closed before `cutoff` into slot_history, by the UTC day they start on,
-- appending to a day already packed. The one definition of the packed form, for this migration and for the compaction that runs
-- with retention. Closed slots are in no feed, so the feed-version triggers are told this is slotfeed's own write.
CREATE FUNCTION "slotfeed_pack_slots"("cutoff" TIMESTAMPTZ, "connections" UUID[]) RETURNS INTEGER
LANGUAGE plpgsql AS $$
DECLARE
  "moved" INTEGER;
  "was" TEXT := current_setting('slotfeed.moves_feed_version', true);
BEGIN
  PERFORM set_config('slotfeed.moves_feed_version', 'on', true);
  WITH "gone" AS (
    DELETE FROM "slot" s
    WHERE s."gone_at" < "cutoff" AND s."connection_id" = ANY("connections")
    RETURNING s."connection_id", s."upstream_event_id", s."starts_at", s."ends_at", s."first_seen_at",
              s."gone_at", s."close_reason"
  ), "dated" AS (
    SELECT g.*, d."day", d."day"::timestamp AT TIME ZONE 'UTC' AS "midnight"
    FROM "gone" g CROSS JOIN LATERAL (SELECT (g."starts_at" AT TIME ZONE 'UTC')::date AS "day") d
  ), "packed" AS (
    INSERT INTO "slot_history" AS h ("connection_id", "day", "first_seen_from", "first_seen_until", "gone_until",
      "upstream_event_id", "start_ms", "length_ms", "seen_ms", "gone_ms", "close_reason")
    SELECT "connection_id", "day", MIN("first_seen_at"), MAX("first_seen_at"), MAX("gone_at"),
      array_agg("upstream_event_id" ORDER BY "starts_at", "upstream_event_id", "first_seen_at"),
      array_agg((EXTRACT(EPOCH FROM "starts_at" - "midnight") * 1000)::integer
                ORDER BY "starts_at", "upstream_event_id", "first_seen_at"),
      array_agg((EXTRACT(EPOCH FROM "ends_at" - "starts_at") * 1000)::integer
                ORDER BY "starts_at", "upstream_event_id", "first_seen_at"),
      array_agg((EXTRACT(EPOCH FROM "first_seen_at" - "starts_at") * 1000)::bigint
                ORDER BY "starts_at", "upstream_event_id", "first_seen_at"),
      array_agg((EXTRACT(EPOCH FROM "gone_at" - "starts_at") * 1000)::bigint
                ORDER BY "starts_at", "upstream_event_id", "first_seen_at"),
      array_agg(COALESCE("close_reason", 'unknown') ORDER BY "starts_at", "upstream_event_id", "first_seen_at")
    FROM "dated" GROUP BY "connection_id", "day"
    ON CONFLICT ("connection_id", "day") DO UPDATE SET
      "first_seen_from" = LEAST(h."first_seen_from", EXCLUDED."first_seen_from"),
      "first_seen_until" = GREATEST(h."first_seen_until", EXCLUDED."first_seen_until"),
      "gone_until" = GREATEST(h."gone_until", EXCLUDED."gone_until"),
      "upstream_event_id" = h."upstream_event_id" || EXCLUDED."upstream_event_id",
      "start_ms" = h."start_ms" || EXCLUDED."start_ms",
      "length_ms" = h."length_ms" || EXCLUDED."length_ms",
      "seen_ms" = h."seen_ms" || EXCLUDED."seen_ms",
      "gone_ms" = h."gone_ms" || EXCLUDED."gone_ms",
      "close_reason" = h."close_reason" || EXCLUDED."close_reason"
    RETURNING 1
  )
  SELECT COUNT(*)::integer INTO "moved" FROM "gone";
  PERFORM set_config('slotfeed.moves_feed_version', COALESCE("was", ''), true);
  RETURN "moved";
END;
$$;

-- Moves the finished sync runs of `connections` that started before `cutoff` into sync_run_history, appending
-- to a day already packed.
CREATE FUNCTION "slotfeed_pack_sync_runs"("cutoff" TIMESTAMPTZ, "connections" UUID[]) RETURNS INTEGER
LANGUAGE sql AS $$
  WITH "gone" AS (
    DELETE FROM "sync_run" r
    WHERE r."started_at" < "cutoff" AND r."finished_at" IS NOT NULL AND r."connection_id" = ANY("connections")
    RETURNING r.*
  ), "dated" AS (
    SELECT g.*, d."day",
           (EXTRACT(EPOCH FROM g."started_at" - (d."day"::timestamp AT TIME ZONE 'UTC')) * 1000)::integer AS "ms"
    FROM "gone" g CROSS JOIN LATERAL (SELECT (g."started_at" AT TIME ZONE 'UTC')::date AS "day") d
  ), "runs" AS (
    SELECT "connection_id", "day",
      array_agg("ms" ORDER BY "started_at", "id") AS "started_ms",
      array_agg((EXTRACT(EPOCH FROM "finished_at" - "started_at") * 1000)::integer ORDER BY "started_at", "id")
        AS "duration_ms",
      array_agg("outcome" ORDER BY "started_at", "id") AS "outcome",
      array_agg("upstream_calls" ORDER BY "started_at", "id") AS "upstream_calls",
      array_agg("error_code" ORDER BY "started_at", "id") AS "error_code",
      array_agg("error_message" ORDER BY "started_at", "id") AS "error_message"
    FROM "dated" GROUP BY 1, 2
  ), "stale" AS (
    SELECT d."connection_id", d."day",
      array_agg(d."ms" ORDER BY d."started_at", d."id", s."band", s."boundSeconds") AS "started_ms",
      array_agg(s."band" ORDER BY d."started_at", d."id", s."band", s."boundSeconds") AS "band",
      array_agg(s."boundSeconds" ORDER BY d."started_at", d."id", s."band", s."boundSeconds") AS "bound",
      array_agg(s."changes" ORDER BY d."started_at", d."id", s."band", s."boundSeconds") AS "changes"
    FROM "dated" d
    CROSS JOIN LATERAL jsonb_to_recordset(d."change_staleness") AS s("band" text, "boundSeconds" float8, "changes" int)
    WHERE d."outcome" = 'succeeded'
    GROUP BY 1, 2
  ), "calls" AS (
    SELECT "connection_id", "day", jsonb_object_agg("endpoint", "calls") AS "calls"
    FROM (SELECT d."connection_id", d."day", e.key AS "endpoint", SUM(e.value::bigint) AS "calls"
          FROM "dated" d CROSS JOIN LATERAL jsonb_each_text(d."calls_by_endpoint") e GROUP BY 1, 2, 3) x
    GROUP BY 1, 2
  ), "packed" AS (
    INSERT INTO "sync_run_history" AS h ("connection_id", "day", "started_ms", "duration_ms", "outcome",
      "upstream_calls", "error_code", "error_message", "stale_started_ms", "stale_band", "stale_bound_seconds",
      "stale_changes", "calls_by_endpoint")
    SELECT r."connection_id", r."day", r."started_ms", r."duration_ms", r."outcome", r."upstream_calls",
           r."error_code", r."error_message", COALESCE(s."started_ms", '{}'), COALESCE(s."band", '{}'),
           COALESCE(s."bound", '{}'), COALESCE(s."changes", '{}'), COALESCE(c."calls", '{}')
    FROM "runs" r
    LEFT JOIN "stale" s ON s."connection_id" = r."connection_id" AND s."day" = r."day"
    LEFT JOIN "calls" c ON c."connection_id" = r."connection_id" AND c."day" = r."day"
    ON CONFLICT ("connection_id", "day") DO UPDATE SET
      "started_ms" = h."started_ms" || EXCLUDED."started_ms",
      "duration_ms" = h."duration_ms" || EXCLUDED."duration_ms",
      "outcome" = h."outcome" || EXCLUDED."outcome",
      "upstream_calls" = h."upstream_calls" || EXCLUDED."upstream_calls",
      "error_code" = h."error_code" || EXCLUDED."error_code",
      "error_message" = h."error_message" || EXCLUDED."error_message",
      "stale_started_ms" = h."stale_started_ms" || EXCLUDED."stale_started_ms",
      "stale_band" = h."stale_band" || EXCLUDED."stale_band",
      "stale_bound_seconds" = h."stale_bound_seconds" || EXCLUDED."stale_bound_seconds",
      "stale_changes" = h."stale_changes" || EXCLUDED."stale_changes",
      "calls_by_endpoint" = (
        SELECT COALESCE(jsonb_object_agg(k, v), '{}') FROM (
          SELECT e.key AS k, SUM(e.value::bigint) AS v
          FROM (SELECT * FROM jsonb_each_text(h."calls_by_endpoint")
                UNION ALL SELECT * FROM jsonb_each_text(EXCLUDED."calls_by_endpoint")) e
          GROUP BY e.key) t)
    RETURNING 1
  )
  SELECT COUNT(*)::integer FROM "gone";
$$;

-- Existing installations: the history of UTC days over before yesterday moves now, as the compaction moves
-- each day's from then on (RETENTION_COMPACT_AFTER_DAYS, 1 by default); superseded overview versions, which no
-- report or feed reads, go.
SELECT "slotfeed_pack_slots"(date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '1 day',
                             ARRAY(SELECT "id" FROM "connection"));
SELECT "slotfeed_pack_sync_runs"(date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '1 day',
                                 ARRAY(SELECT "id" FROM "connection"));
DELETE FROM "overview" WHERE "valid_to" < now() - interval '1 day';
