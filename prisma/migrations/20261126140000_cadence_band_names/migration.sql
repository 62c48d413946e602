-- Cadence bands (SYNC_BANDS) are named by the dates they cover, last one included ("days 0-3", "day 4",
-- "days 7+"), where their old names ("0-4d", "4-5d", "7d+") could be a report band's too ("1-3d", "3-7d",
-- "7d+": hours ahead, on the staleness metric and in sync-health). What is stored under a band's name moves to
-- its new one, so no connection's bands fall due at once and no adapted interval is lost:
-- - connection.band_state: its keys;
-- - overview.band (the '' of overviews older than bands stays);
-- - sync_run.bands, in order.
-- Sync jobs queued before this still name the old bands: such a job pulls the profile and event types only, and
-- the next tick picks the bands up again.
CREATE FUNCTION "slotfeed_cadence_band_name"(old_name TEXT) RETURNS TEXT
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN old_name ~ '^[0-9]+d\+$' THEN 'days ' || left(old_name, -2) || '+'
    WHEN old_name ~ '^[0-9]+-[0-9]+d$' THEN
      CASE
        WHEN split_part(left(old_name, -1), '-', 2)::int - split_part(old_name, '-', 1)::int = 1
          THEN 'day ' || split_part(old_name, '-', 1)
        ELSE 'days ' || split_part(old_name, '-', 1) || '-' || (split_part(left(old_name, -1), '-', 2)::int - 1)
      END
    ELSE old_name
  END
$$;

UPDATE "connection"
SET "band_state" = (
  SELECT jsonb_object_agg("slotfeed_cadence_band_name"(entry.key), entry.value)
  FROM jsonb_each("band_state") AS entry
)
WHERE jsonb_typeof("band_state") = 'object' AND "band_state" <> '{}'::jsonb;

UPDATE "overview"
SET "band" = "slotfeed_cadence_band_name"("band")
WHERE "band" ~ '^[0-9]+(-[0-9]+d|d\+)$';

UPDATE "sync_run"
SET "bands" = ARRAY(
  SELECT "slotfeed_cadence_band_name"(band.name)
  FROM unnest("bands") WITH ORDINALITY AS band(name, position)
  ORDER BY band.position
)
WHERE cardinality("bands") > 0;

DROP FUNCTION "slotfeed_cadence_band_name"(TEXT);
