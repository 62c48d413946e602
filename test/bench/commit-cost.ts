// Benchmark 3: the cost of committing one sync's snapshot (commitSuccessfulSync, called directly with synthetic
// snapshots) of 1,000 and 10,000 open slots of which 1 % changed (that many booked away, as many new ones),
// against a plain `INSERT … SELECT` of the same number of rows into a copy of the slot table (same columns and
// indexes) in the same database. The ratio says how far the commit is from the cheapest write Postgres offers.
import { randomUUID } from 'node:crypto';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { commitSuccessfulSync, type SnapshotInput } from '../../src/store/snapshots.js';
import type { FetchedSlot } from '../../src/store/slot-diff.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { check, type BenchSection } from './bench-result.js';
import { round } from './process-stats.js';

const EVENT_IDS = ['evt_a', 'evt_b', 'evt_c'];
const SLOT_MS = 30 * 60_000;
const CHANGED_SHARE = 0.01;
const BASE_MS = Date.parse('2026-03-02T00:00:00Z');

/** Slot number n: event type n mod 3, every half hour from the base instant. */
function slotAt(n: number): FetchedSlot {
  const startsAt = new Date(BASE_MS + Math.floor(n / EVENT_IDS.length) * SLOT_MS);
  return {
    eventId: EVENT_IDS[n % EVENT_IDS.length] ?? 'evt_a',
    startsAt,
    endsAt: new Date(startsAt.getTime() + SLOT_MS),
  };
}

function snapshotOf(slots: FetchedSlot[]): SnapshotInput {
  return {
    profile: {
      payload: { name: 'Bench', email: 'bench@example.test', timezone: 'UTC' },
      email: 'bench@example.test',
      name: 'Bench',
      timezone: 'UTC',
    },
    eventTypes: EVENT_IDS.map((id) => ({
      upstreamEventId: id,
      title: `Event ${id}`,
      durationMinutes: 30,
      enabled: true,
      secret: false,
      url: `https://book.example.test/${id}`,
      color: '#336699',
      payload: { event_id: id, title: `Event ${id}`, duration_minutes: 30 },
    })),
    overviews: EVENT_IDS.map((id) => ({
      upstreamEventId: id,
      band: 'days 0+',
      payload: { event_id: id, windows: [] },
    })),
    slots,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

async function commit(prisma: PrismaClient, connectionId: string, slots: FetchedSlot[]) {
  const now = new Date();
  const started = performance.now();
  const changes = await commitSuccessfulSync(prisma, {
    connectionId,
    snapshot: snapshotOf(slots),
    run: { id: randomUUID(), jobId: null, attempt: 1, startedAt: now, callsByEndpoint: {} },
    now,
    next: new Date(now.getTime() + 900_000),
  });
  return { ms: performance.now() - started, changes };
}

async function measureSize(db: TestDatabase, slotCount: number, iterations: number): Promise<BenchSection> {
  const connection = await db.prisma.connection.create({
    data: { upstreamUserId: `bench-${slotCount}-${randomUUID()}`, timezone: 'UTC' },
  });
  // Slots [next - slotCount, next) are the open ones; each iteration books the oldest 1 % and adds as many new.
  let first = 0;
  let next = slotCount;
  const current = () => Array.from({ length: next - first }, (_, i) => slotAt(first + i));
  await commit(db.prisma, connection.id, current());
  const changed = Math.round(slotCount * CHANGED_SHARE);
  const commitMs: number[] = [];
  const insertMs: number[] = [];
  await db.sql.query(
    'CREATE TABLE IF NOT EXISTS slot_baseline (LIKE slot INCLUDING DEFAULTS INCLUDING INDEXES)',
  );
  for (let i = 0; i < iterations; i++) {
    first += changed;
    next += changed;
    const { ms, changes } = await commit(db.prisma, connection.id, current());
    check(
      changes.slotsOpened === changed && changes.slotsClosed === changed,
      `commit of ${slotCount} slots changed ${changes.slotsOpened}/${changes.slotsClosed}, expected ${changed}`,
    );
    commitMs.push(ms);

    await db.sql.query('TRUNCATE slot_baseline');
    const started = performance.now();
    await db.sql.query(
      `INSERT INTO slot_baseline (connection_id, upstream_event_id, starts_at, ends_at, first_seen_at, last_changed_at)
       SELECT $1::uuid, 'evt_' || (n % 3), $2::timestamptz + n * interval '10 minutes',
              $2::timestamptz + n * interval '10 minutes' + interval '30 minutes', now(), now()
       FROM generate_series(1, $3::int) AS n`,
      [connection.id, new Date(BASE_MS).toISOString(), slotCount],
    );
    insertMs.push(performance.now() - started);
  }
  const commitMedian = median(commitMs);
  const insertMedian = median(insertMs);
  return {
    benchmark: `commit cost, ${slotCount.toLocaleString('en')} slots`,
    inputs: { openSlots: slotCount, changedShare: '1 % (booked away + as many new)', iterations },
    figures: {
      commitMsMedian: round(commitMedian, 1),
      insertSelectMsMedian: round(insertMedian, 1),
      ratioCommitToInsertSelect: round(commitMedian / insertMedian, 2),
      slotsOpenedAndClosedPerCommit: changed,
    },
  };
}

export async function benchCommitCost(sizes = [1_000, 10_000], iterations = 7): Promise<BenchSection[]> {
  const db = await createTestDatabase('bench_commit');
  try {
    const sections: BenchSection[] = [];
    for (const size of sizes) sections.push(await measureSize(db, size, iterations));
    return sections;
  } finally {
    await db.drop();
  }
}
