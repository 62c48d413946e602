// A generated history with a bit of everything the reports read, for comparing forms of it
// (compact-history.test.ts): four connections (Europe/Berlin, Asia/Kolkata +5:30, Australia/Lord_Howe with its
// half-hour DST, and one without a zone), three event types each (one renamed mid-way), 60 days back and 28
// ahead of HISTORY_NOW of slots at times with milliseconds: booked, some reopened and booked again, closed by a
// disabled event type, passed, or still open; a sync run every 20 minutes of every outcome, with errors, calls
// per endpoint and staleness bounds; one run without an end; bookings inferred from the taken closes as every
// commit infers them (slotfeed_inferred_bookings). Seeded, with ids of its own, so every database it is
// generated in holds the same.
import type { PrismaClient } from '../../src/generated/prisma/client.js';

export const HISTORY_NOW = new Date('2026-09-20T12:34:56.789Z');

export async function generateMixedHistory(
  prisma: PrismaClient,
): Promise<{ connections: string[]; eventId: string }> {
  const now = HISTORY_NOW;
  await prisma.$transaction(
    async (tx) => {
      await tx.$queryRaw`SELECT setseed(0.43)::text`;
      await tx.$executeRaw`
        INSERT INTO connection (id, upstream_user_id, email, timezone, status, first_synced_at, updated_at)
        SELECT md5('mixed history ' || i)::uuid, 'usr_' || i, 'mixed' || i || '@example.test',
               (ARRAY['Europe/Berlin', 'Asia/Kolkata', 'Australia/Lord_Howe', NULL])[i],
               (CASE WHEN i = 3 THEN 'needs_reauth' ELSE 'active' END)::connection_status,
               ${now}::timestamptz - interval '60 days' + i * interval '17 minutes 3.141 seconds', now()
        FROM generate_series(1, 4) i`;
      // Event types: evt_2 renamed 20 days back (two versions), so titles as of an instant differ.
      await tx.$executeRaw`
        INSERT INTO event_type (connection_id, upstream_event_id, title, duration_minutes, enabled, content_hash,
                                payload, valid_from, valid_to)
        SELECT c.id, 'evt_' || e, 'Event ' || e, 30 * e, true, 'h', '{}'::jsonb,
               ${now}::timestamptz - interval '90 days',
               CASE WHEN e = 2 THEN ${now}::timestamptz - interval '20 days' END
        FROM connection c, generate_series(1, 3) e`;
      await tx.$executeRaw`
        INSERT INTO event_type (connection_id, upstream_event_id, title, duration_minutes, enabled, content_hash,
                                payload, valid_from)
        SELECT c.id, 'evt_2', 'Event 2, renamed', 60, true, 'h2', '{}'::jsonb, ${now}::timestamptz - interval '20 days'
        FROM connection c`;
      // Candidate slots: per event type, day and hour; event e lasts 30·e minutes, so they overlap.
      await tx.$executeRaw`
        CREATE TEMP TABLE candidate ON COMMIT DROP AS
        SELECT et.connection_id, et.upstream_event_id AS event, x.st, x.st + et.duration_minutes * interval '1 minute' AS en,
               LEAST(x.st - (0.2 + random() * 20) * interval '1 day', ${now}::timestamptz - interval '3 minutes') AS fs,
               random() AS r, random() AS q
        FROM event_type et, generate_series(-60, 27) d, generate_series(0, 5) h,
        LATERAL (SELECT date_trunc('day', ${now}::timestamptz) + d * interval '1 day' + interval '5 hours'
                        + h * interval '150 minutes' + (et.duration_minutes % 7) * interval '1.5 seconds' AS st) x
        WHERE et.valid_to IS NULL`;
      // First periods: taken (8 %, half of them reopened below), closed by a disabled event type (2 %), else
      // passed 10 minutes after the start, or still open when that is after now.
      await tx.$executeRaw`
        INSERT INTO slot (connection_id, upstream_event_id, starts_at, ends_at, first_seen_at, last_changed_at,
                          gone_at, close_reason)
        SELECT c.connection_id, c.event, c.st, c.en, c.fs, c.fs, g.gone,
               CASE WHEN g.gone IS NULL THEN NULL
                    WHEN c.r < 0.08 THEN 'taken' WHEN c.r < 0.10 THEN 'event_type_disabled' ELSE 'passed'
               END::slot_close_reason
        FROM candidate c,
        LATERAL (SELECT CASE
          WHEN c.r < 0.10 THEN c.fs + (LEAST(c.st, ${now}::timestamptz) - c.fs) * c.q
          WHEN c.st + interval '10 minutes' <= ${now}::timestamptz THEN c.st + interval '10 minutes'
        END AS gone) g`;
      // Reopened after a booking was cancelled: a second period from an hour after the close.
      await tx.$executeRaw`
        INSERT INTO slot (connection_id, upstream_event_id, starts_at, ends_at, first_seen_at, last_changed_at,
                          gone_at, close_reason)
        SELECT s.connection_id, s.upstream_event_id, s.starts_at, s.ends_at, s.gone_at + interval '1 hour 0.007 seconds',
               s.gone_at + interval '1 hour', g.gone,
               CASE WHEN g.gone IS NOT NULL THEN
                 CASE WHEN g.gone < s.starts_at THEN 'taken' ELSE 'passed' END END::slot_close_reason
        FROM slot s JOIN candidate c ON c.connection_id = s.connection_id AND c.event = s.upstream_event_id
                                     AND c.st = s.starts_at,
        LATERAL (SELECT CASE
          WHEN c.q < 0.5 AND s.gone_at + interval '2 hours' < LEAST(s.starts_at, ${now}::timestamptz)
            THEN s.gone_at + interval '2 hours'
          WHEN s.starts_at + interval '10 minutes' <= ${now}::timestamptz THEN s.starts_at + interval '10 minutes'
        END AS gone) g
        WHERE c.r < 0.04 AND s.close_reason = 'taken'
          AND s.gone_at + interval '1 hour' < LEAST(s.starts_at, ${now}::timestamptz)`;
      // Runs every 20 minutes (and a few ms), of every outcome; staleness on successful ones.
      await tx.$executeRaw`
        INSERT INTO sync_run (id, connection_id, started_at, finished_at, outcome, error_code, error_message,
                              upstream_calls, calls_by_endpoint, change_staleness)
        SELECT gen_random_uuid(), c.id, t.s, t.s + (200 + floor(random() * 9000)) * interval '1 millisecond',
               o.outcome::sync_outcome,
               CASE WHEN o.outcome = 'failed' THEN 'upstream_5xx' END,
               CASE WHEN o.outcome = 'failed' THEN 'GET /events answered 503 at ' || t.s END,
               t.calls, jsonb_build_object('GET /events', 1, 'GET /calendars/{id}/slots', t.calls - 1),
               CASE WHEN o.outcome = 'succeeded' AND random() < 0.6 THEN jsonb_build_array(
                 jsonb_build_object('band', (ARRAY['0-24h', '1-3d', '3-7d', '7d+'])[1 + floor(random() * 4)::int],
                                    'boundSeconds', round((random() * 7200)::numeric, 3), 'changes', 1 + floor(random() * 3)::int),
                 jsonb_build_object('band', '0-24h', 'boundSeconds', random() * 600, 'changes', 1))
               ELSE '[]'::jsonb END
        FROM connection c,
        LATERAL (SELECT g + (random() * 999)::int * interval '1 millisecond' AS s, random() AS o, 3 + (random() * 20)::int AS calls
                 FROM generate_series(${now}::timestamptz - interval '60 days', ${now}::timestamptz - interval '1 minute',
                                      interval '20 minutes') g) t,
        LATERAL (SELECT CASE WHEN t.o < 0.05 THEN 'failed' WHEN t.o < 0.08 THEN 'superseded'
                             WHEN t.o < 0.10 THEN 'interrupted' ELSE 'succeeded' END AS outcome) o`;
      await tx.$executeRaw`
        INSERT INTO sync_run (id, connection_id, started_at, outcome, upstream_calls)
        SELECT gen_random_uuid(), id, ${now}::timestamptz - interval '30 days', 'failed', 2 FROM connection LIMIT 1`;
      await tx.$executeRaw`
        INSERT INTO booking (connection_id, detected_at, starts_at, ends_at, event_ids, slots_closed)
        SELECT d.connection_id, d.gone_at, b.starts_at, b.ends_at, b.event_ids, b.slots_closed
        FROM (SELECT DISTINCT connection_id, gone_at FROM slot WHERE close_reason = 'taken') d,
             LATERAL slotfeed_inferred_bookings(d.connection_id, d.gone_at) b`;
    },
    { timeout: 120_000 },
  );
  await prisma.$executeRaw`ANALYZE`;
  const connections = await prisma.connection.findMany({
    orderBy: { upstreamUserId: 'asc' },
    select: { id: true },
  });
  return { connections: connections.map((c) => c.id), eventId: 'evt_2' };
}
