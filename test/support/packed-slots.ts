// A few connections' slots, packed as the compaction packs them, for the tests that hold a report's plan to what it
// reads of the packed history (test/reports/*-plan.test.ts).
import { pruneHistory } from '../../src/store/retention.js';
import type { TestDatabase } from './db.js';

/**
 * `connections` connections (in Europe/Berlin, first synced 30 days before the history), each with a slot every two
 * hours of 3 event types over the `days` days before `now`'s, first seen three days ahead; every seventh taken a day
 * before it started, the rest passed; with `bookingsPerDay`, that many bookings of evt_1 seen each day an hour apart, two
 * days before they start; then every closed slot packed a row per connection-day (slot_history) and the days over
 * stored as the reports read them, bookings' totals included.
 */
export async function generatePackedSlots(
  db: TestDatabase,
  {
    connections,
    days,
    now,
    bookingsPerDay = 0,
  }: { connections: number; days: number; now: Date; bookingsPerDay?: number },
): Promise<void> {
  await db.prisma.$executeRaw`
    INSERT INTO connection (id, upstream_user_id, email, timezone, status, first_synced_at, updated_at)
    SELECT gen_random_uuid(), 'usr_' || i, 'user' || i || '@plan.test', 'Europe/Berlin', 'active',
           ${now}::timestamptz - ${days + 30}::int * interval '1 day', now()
    FROM generate_series(1, ${connections}::int) i`;
  await db.prisma.$executeRaw`
    INSERT INTO slot (connection_id, upstream_event_id, starts_at, ends_at, first_seen_at, last_changed_at, gone_at,
                      close_reason)
    SELECT c.id, 'evt_' || e, t.s, t.s + interval '30 minutes', t.s - interval '3 days', t.s - interval '3 days',
           CASE WHEN t.n % 7 = 0 THEN t.s - interval '1 day' ELSE t.s + interval '10 minutes' END,
           (CASE WHEN t.n % 7 = 0 THEN 'taken' ELSE 'passed' END)::slot_close_reason
    FROM connection c, generate_series(1, 3) e,
    LATERAL (SELECT g AS s, row_number() OVER (ORDER BY g) AS n
             FROM generate_series(${now}::timestamptz - ${days}::int * interval '1 day',
                                  ${now}::timestamptz - interval '1 day', interval '2 hours') g) t`;
  await db.prisma.$executeRaw`
    INSERT INTO booking (connection_id, detected_at, starts_at, ends_at, event_ids, slots_closed)
    SELECT c.id, t.at, t.at + interval '2 days', t.at + interval '2 days 30 minutes', ARRAY['evt_1'], 1
    FROM connection c
    CROSS JOIN generate_series(1, ${days}::int) d
    CROSS JOIN generate_series(1, ${bookingsPerDay}::int) k
    CROSS JOIN LATERAL (SELECT ${now}::timestamptz - d * interval '1 day' + k * interval '1 hour' AS at) t`;
  await pruneHistory(
    db.prisma,
    { syncRunDays: 0, closedSlotDays: 0, compactAfterDays: 1, batchSize: 1000 },
    { now, pause: async () => undefined },
  );
}
