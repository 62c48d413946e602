-- Compact history (issue 43): what the reports read of past days, kept in the form they read it, one row per
-- connection and UTC day in place of a row per slot or per sync run (src/store/history-compaction.ts). The
-- arrays of one row are parallel: element i of each is one slot (or run), ordered by start. Lossless for every
-- figure a report reads, so every report answers the same (test/reports/compact-history.test.ts).
--
-- slot_history: slots closed before a day that is over, by the UTC day they start on. event_index points into
-- the row's event_ids; times are milliseconds: start_ms after the day's UTC midnight, length_ms the slot's
-- length, seen_ms and gone_ms from its start to when it was first seen and when it closed (negative: before it
-- started); close_reason is the position of the reason in the enum slot_close_reason. Kept: what reports read
-- (event type, start, end, first seen, gone, why); not kept: the row id, SEQUENCE and last change, which only
-- feeds read, and feeds show open slots. The bounds let a report skip the rows whose slots cannot be in its range.
CREATE TABLE "slot_history" (
    "connection_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "first_seen_from" TIMESTAMPTZ(3) NOT NULL,
    "first_seen_until" TIMESTAMPTZ(3) NOT NULL,
    "gone_until" TIMESTAMPTZ(3) NOT NULL,
    "event_ids" TEXT[] NOT NULL,
    "event_index" SMALLINT[] NOT NULL,
    "start_ms" INTEGER[] NOT NULL,
    "length_ms" INTEGER[] NOT NULL,
    "seen_ms" BIGINT[] NOT NULL,
    "gone_ms" BIGINT[] NOT NULL,
    "close_reason" SMALLINT[] NOT NULL,
    CONSTRAINT "slot_history_pkey" PRIMARY KEY ("connection_id", "day")
);
CREATE INDEX "slot_history_day_idx" ON "slot_history"("day");
CREATE INDEX "slot_history_gone_until_idx" ON "slot_history"("gone_until");
ALTER TABLE "slot_history" ADD CONSTRAINT "slot_history_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- sync_run_history: finished sync runs of days that are over, by the UTC day they started on, ordered by start:
-- start (ms after midnight), duration (ms), outcome (its position in the enum sync_outcome), upstream calls,
-- error; the slot changes their successful runs stored with their staleness bounds, one element per run, band
-- and bound (stale_run: the run's position, 1-based; stale_band: a position in stale_band_names); the day's
-- calls per endpoint, summed.
CREATE TABLE "sync_run_history" (
    "connection_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "started_ms" INTEGER[] NOT NULL,
    "duration_ms" INTEGER[] NOT NULL,
    "outcome" SMALLINT[] NOT NULL,
    "upstream_calls" INTEGER[] NOT NULL,
    "error_code" TEXT[] NOT NULL,
    "error_message" TEXT[] NOT NULL,
    "stale_band_names" TEXT[] NOT NULL,
    "stale_run" SMALLINT[] NOT NULL,
    "stale_band" SMALLINT[] NOT NULL,
    "stale_bound_seconds" DOUBLE PRECISION[] NOT NULL,
    "stale_changes" INTEGER[] NOT NULL,
    "calls_by_endpoint" JSONB NOT NULL DEFAULT '{}',
    CONSTRAINT "sync_run_history_pkey" PRIMARY KEY ("connection_id", "day")
);
CREATE INDEX "sync_run_history_day_idx" ON "sync_run_history"("day");
ALTER TABLE "sync_run_history" ADD CONSTRAINT "sync_run_history_connection_id_fkey" FOREIGN KEY ("connection_id") REFERENCES "connection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Moves the slots of `connections` that closed before `cutoff` into slot_history, by the UTC day they start on;
-- a day packed already is unpacked and packed again with them. The one definition of the packed form, for this
-- migration and for the compaction that runs with retention. Closed slots are in no feed, so the feed-version
-- triggers are told this is slotfeed's own write.
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
  ), "fresh" AS (
    SELECT g."connection_id", d."day", g."upstream_event_id" AS "event",
           (EXTRACT(EPOCH FROM g."starts_at" - (d."day"::timestamp AT TIME ZONE 'UTC')) * 1000)::integer AS "start_ms",
           (EXTRACT(EPOCH FROM g."ends_at" - g."starts_at") * 1000)::integer AS "length_ms",
           (EXTRACT(EPOCH FROM g."first_seen_at" - g."starts_at") * 1000)::bigint AS "seen_ms",
           (EXTRACT(EPOCH FROM g."gone_at" - g."starts_at") * 1000)::bigint AS "gone_ms",
           array_position(enum_range(NULL::"slot_close_reason"), COALESCE(g."close_reason", 'unknown'))::smallint
             AS "reason"
    FROM "gone" g CROSS JOIN LATERAL (SELECT (g."starts_at" AT TIME ZONE 'UTC')::date AS "day") d
  ), "touched" AS (
    SELECT DISTINCT "connection_id", "day" FROM "fresh"
  ), "packed_before" AS (
    DELETE FROM "slot_history" h USING "touched" t
    WHERE h."connection_id" = t."connection_id" AND h."day" = t."day"
    RETURNING h.*
  ), "elements" AS (
    SELECT * FROM "fresh"
    UNION ALL
    SELECT p."connection_id", p."day", p."event_ids"[u."e"], u."start_ms", u."length_ms", u."seen_ms", u."gone_ms",
           u."reason"
    FROM "packed_before" p
    CROSS JOIN LATERAL unnest(p."event_index", p."start_ms", p."length_ms", p."seen_ms", p."gone_ms", p."close_reason")
      AS u("e", "start_ms", "length_ms", "seen_ms", "gone_ms", "reason")
  ), "dictionary" AS (
    SELECT "connection_id", "day", array_agg(DISTINCT "event" ORDER BY "event") AS "event_ids"
    FROM "elements" GROUP BY 1, 2
  ), "packed" AS (
    INSERT INTO "slot_history" ("connection_id", "day", "first_seen_from", "first_seen_until", "gone_until",
      "event_ids", "event_index", "start_ms", "length_ms", "seen_ms", "gone_ms", "close_reason")
    SELECT e."connection_id", e."day",
      MIN(m."midnight" + (e."start_ms" + e."seen_ms") * interval '1 millisecond'),
      MAX(m."midnight" + (e."start_ms" + e."seen_ms") * interval '1 millisecond'),
      MAX(m."midnight" + (e."start_ms" + e."gone_ms") * interval '1 millisecond'),
      d."event_ids",
      array_agg(array_position(d."event_ids", e."event")::smallint ORDER BY e."start_ms", e."event", e."seen_ms"),
      array_agg(e."start_ms" ORDER BY e."start_ms", e."event", e."seen_ms"),
      array_agg(e."length_ms" ORDER BY e."start_ms", e."event", e."seen_ms"),
      array_agg(e."seen_ms" ORDER BY e."start_ms", e."event", e."seen_ms"),
      array_agg(e."gone_ms" ORDER BY e."start_ms", e."event", e."seen_ms"),
      array_agg(e."reason" ORDER BY e."start_ms", e."event", e."seen_ms")
    FROM "elements" e
    JOIN "dictionary" d ON d."connection_id" = e."connection_id" AND d."day" = e."day"
    CROSS JOIN LATERAL (SELECT e."day"::timestamp AT TIME ZONE 'UTC' AS "midnight") m
    GROUP BY e."connection_id", e."day", d."event_ids"
    RETURNING 1
  )
  SELECT COUNT(*)::integer INTO "moved" FROM "gone";
  PERFORM set_config('slotfeed.moves_feed_version', COALESCE("was", ''), true);
  RETURN "moved";
END;
$$;

-- Moves the finished sync runs of `connections` that started before `cutoff` into sync_run_history; a day
-- packed already is unpacked and packed again with them.
CREATE FUNCTION "slotfeed_pack_sync_runs"("cutoff" TIMESTAMPTZ, "connections" UUID[]) RETURNS INTEGER
LANGUAGE sql AS $$
  WITH "gone" AS (
    DELETE FROM "sync_run" r
    WHERE r."started_at" < "cutoff" AND r."finished_at" IS NOT NULL AND r."connection_id" = ANY("connections")
    RETURNING r.*
  ), "fresh" AS (
    SELECT g."connection_id", d."day", 'n' || g."id" AS "key",
           (EXTRACT(EPOCH FROM g."started_at" - (d."day"::timestamp AT TIME ZONE 'UTC')) * 1000)::integer AS "started_ms",
           (EXTRACT(EPOCH FROM g."finished_at" - g."started_at") * 1000)::integer AS "duration_ms",
           array_position(enum_range(NULL::"sync_outcome"), g."outcome")::smallint AS "outcome",
           g."upstream_calls", g."error_code", g."error_message", g."calls_by_endpoint", g."change_staleness"
    FROM "gone" g CROSS JOIN LATERAL (SELECT (g."started_at" AT TIME ZONE 'UTC')::date AS "day") d
  ), "touched" AS (
    SELECT DISTINCT "connection_id", "day" FROM "fresh"
  ), "packed_before" AS (
    DELETE FROM "sync_run_history" h USING "touched" t
    WHERE h."connection_id" = t."connection_id" AND h."day" = t."day"
    RETURNING h.*
  ), "runs" AS (
    SELECT "connection_id", "day", "key", "started_ms", "duration_ms", "outcome", "upstream_calls", "error_code",
           "error_message"
    FROM "fresh"
    UNION ALL
    SELECT p."connection_id", p."day", 'o' || lpad(u."n"::text, 5, '0'), u."started_ms", u."duration_ms", u."outcome",
           u."upstream_calls", u."error_code", u."error_message"
    FROM "packed_before" p
    CROSS JOIN LATERAL unnest(p."started_ms", p."duration_ms", p."outcome", p."upstream_calls", p."error_code",
                              p."error_message") WITH ORDINALITY
      AS u("started_ms", "duration_ms", "outcome", "upstream_calls", "error_code", "error_message", "n")
  ), "positioned" AS (
    SELECT "connection_id", "day", "key",
           row_number() OVER (PARTITION BY "connection_id", "day" ORDER BY "started_ms", "key") AS "position"
    FROM "runs"
  ), "stale" AS (
    SELECT f."connection_id", f."day", f."key", s."band", s."boundSeconds" AS "bound", s."changes"
    FROM "fresh" f
    CROSS JOIN LATERAL jsonb_to_recordset(f."change_staleness") AS s("band" text, "boundSeconds" float8, "changes" int)
    WHERE f."outcome" = array_position(enum_range(NULL::"sync_outcome"), 'succeeded')
    UNION ALL
    SELECT p."connection_id", p."day", 'o' || lpad(u."run"::text, 5, '0'), p."stale_band_names"[u."band"], u."bound",
           u."changes"
    FROM "packed_before" p
    CROSS JOIN LATERAL unnest(p."stale_run", p."stale_band", p."stale_bound_seconds", p."stale_changes")
      AS u("run", "band", "bound", "changes")
  ), "band_names" AS (
    SELECT "connection_id", "day", array_agg(DISTINCT "band" ORDER BY "band") AS "names" FROM "stale" GROUP BY 1, 2
  ), "stale_packed" AS (
    SELECT s."connection_id", s."day", b."names",
      array_agg(p."position"::smallint ORDER BY p."position", s."band", s."bound", s."changes") AS "run",
      array_agg(array_position(b."names", s."band")::smallint ORDER BY p."position", s."band", s."bound", s."changes")
        AS "band",
      array_agg(s."bound" ORDER BY p."position", s."band", s."bound", s."changes") AS "bound",
      array_agg(s."changes" ORDER BY p."position", s."band", s."bound", s."changes") AS "changes"
    FROM "stale" s
    JOIN "positioned" p ON p."connection_id" = s."connection_id" AND p."day" = s."day" AND p."key" = s."key"
    JOIN "band_names" b ON b."connection_id" = s."connection_id" AND b."day" = s."day"
    GROUP BY s."connection_id", s."day", b."names"
  ), "calls" AS (
    SELECT "connection_id", "day", jsonb_object_agg("endpoint", "calls") AS "calls"
    FROM (SELECT x."connection_id", x."day", e.key AS "endpoint", SUM(e.value::bigint) AS "calls"
          FROM (SELECT "connection_id", "day", "calls_by_endpoint" FROM "fresh"
                UNION ALL SELECT "connection_id", "day", "calls_by_endpoint" FROM "packed_before") x
          CROSS JOIN LATERAL jsonb_each_text(x."calls_by_endpoint") e
          GROUP BY 1, 2, 3) t
    GROUP BY 1, 2
  ), "runs_packed" AS (
    SELECT "connection_id", "day",
      array_agg("started_ms" ORDER BY "started_ms", "key") AS "started_ms",
      array_agg("duration_ms" ORDER BY "started_ms", "key") AS "duration_ms",
      array_agg("outcome" ORDER BY "started_ms", "key") AS "outcome",
      array_agg("upstream_calls" ORDER BY "started_ms", "key") AS "upstream_calls",
      array_agg("error_code" ORDER BY "started_ms", "key") AS "error_code",
      array_agg("error_message" ORDER BY "started_ms", "key") AS "error_message"
    FROM "runs" GROUP BY 1, 2
  ), "packed" AS (
    INSERT INTO "sync_run_history" ("connection_id", "day", "started_ms", "duration_ms", "outcome",
      "upstream_calls", "error_code", "error_message", "stale_band_names", "stale_run", "stale_band",
      "stale_bound_seconds", "stale_changes", "calls_by_endpoint")
    SELECT r."connection_id", r."day", r."started_ms", r."duration_ms", r."outcome", r."upstream_calls",
           r."error_code", r."error_message", COALESCE(s."names", '{}'), COALESCE(s."run", '{}'),
           COALESCE(s."band", '{}'), COALESCE(s."bound", '{}'), COALESCE(s."changes", '{}'), COALESCE(c."calls", '{}')
    FROM "runs_packed" r
    LEFT JOIN "stale_packed" s ON s."connection_id" = r."connection_id" AND s."day" = r."day"
    LEFT JOIN "calls" c ON c."connection_id" = r."connection_id" AND c."day" = r."day"
    RETURNING 1
  )
  SELECT COUNT(*)::integer FROM "gone";
$$;

-- Existing installations: the history of UTC days over (before today) moves now, as the compaction moves each
-- day's from then on (RETENTION_COMPACT_AFTER_DAYS, 1 by default); superseded overview versions, which no
-- report or feed reads, go.
SELECT "slotfeed_pack_slots"(date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
                             ARRAY(SELECT "id" FROM "connection"));
SELECT "slotfeed_pack_sync_runs"(date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
                                 ARRAY(SELECT "id" FROM "connection"));
DELETE FROM "overview" WHERE "valid_to" < date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
