// Benchmark 5 (storage): rows and bytes the history grows by, per connection per day, at a realistic change
// rate: hourly syncs that each see 5 % of the open slots change (booked away, and as many reopened), and once a
// day the horizon moving on (a day of slots expires, a new one opens, each overview's payload changes).
// Synthetic snapshots go through commitSuccessfulSync, as a worker's would, into a fresh database; sizes are
// Postgres's own (pg_total_relation_size: heap, indexes, TOAST) after VACUUM, so dead versions left by
// closing slots count only where VACUUM cannot reuse their space.
import { randomUUID } from 'node:crypto';
import { commitSuccessfulSync, type SnapshotInput } from '../../src/store/snapshots.js';
import type { FetchedSlot } from '../../src/store/slot-diff.js';
import { pruneHistory } from '../../src/store/retention.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { check, type BenchSection } from './bench-result.js';
import { rowWritesBetween, rowWritesByTable, settlePostgresStatistics } from './postgres-writes.js';
import { round } from './process-stats.js';

/** The tables a sync writes only when something changed (a sync run and its connection are written every time). */
const CHANGE_TABLES = new Set(['slot', 'booking', 'overview', 'event_type', 'profile']);

const TABLES = [
  'slot',
  'sync_run',
  'booking',
  'overview',
  'event_type',
  'profile',
  'sync_run_daily',
] as const;
/** The retention defaults (RETENTION_SYNC_RUNS_DAYS, RETENTION_CLOSED_SLOTS_DAYS) the year after is computed with. */
const RETAINED_RUN_DAYS = 90;
const RETAINED_CLOSED_SLOT_DAYS = 180;
const EVENT_IDS = ['evt_a', 'evt_b', 'evt_c'];
const HORIZON_DAYS = 28;
const DAY_MS = 86_400_000;
const CALLS = {
  'GET /users/me': 1,
  'GET /events': 1,
  'GET /calendars/{event_id}': 3,
  'GET /calendars/{event_id}/slots': 60,
};

export interface GrowthOptions {
  connections?: number;
  /** Open slots per connection; the sync round's average is ~380 with 3 event types over 28 days. */
  slotsPerConnection?: number;
  days?: number;
  /** Share of the open slots that change per hourly sync: the day's churn, whatever the syncs per day. */
  changeShare?: number;
  /**
   * Commits per connection-day, evenly spaced (default 24, hourly). More syncs see the same day's churn in
   * smaller parts (the default bands: ~20 an hour, most of them seeing nothing new), each writing its run row.
   */
  syncsPerDay?: number;
}

/** A small seeded generator (mulberry32): the same run every time. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Account {
  id: string;
  /** Candidate slots by key; `open` says whether the upstream offers it now. */
  slots: Map<string, FetchedSlot & { open: boolean }>;
}

function dayOfSlots(dayStartMs: number, perDay: number): FetchedSlot[] {
  return Array.from({ length: perDay }, (_, n) => {
    const startsAt = new Date(dayStartMs + 8 * 3_600_000 + Math.floor(n / EVENT_IDS.length) * 30 * 60_000);
    return {
      eventId: EVENT_IDS[n % EVENT_IDS.length] ?? '',
      startsAt,
      endsAt: new Date(startsAt.getTime() + 1_800_000),
    };
  });
}

function snapshotOf(account: Account, dayStartMs: number): SnapshotInput {
  const dates = Array.from({ length: 20 }, (_, i) =>
    new Date(dayStartMs + i * DAY_MS).toISOString().slice(0, 10),
  );
  const overview = {
    timezone: 'Europe/Berlin',
    availability: {
      disabled_dates: { days: ['2026-12-25'], months: [] },
      first_available_date: dates[0],
      weekly: {
        week_days: { mon: true, tue: true, wed: true, thu: true, fri: true, sat: false, sun: false },
      },
      last_available_date: dates[dates.length - 1],
      available_dates: dates,
    },
  };
  return {
    profile: {
      payload: { name: 'Ada', timezone: 'Europe/Berlin' },
      email: 'ada@example.test',
      name: 'Ada',
      timezone: 'Europe/Berlin',
    },
    eventTypes: EVENT_IDS.map((id) => ({
      upstreamEventId: id,
      title: `Event ${id}`,
      durationMinutes: 30,
      enabled: true,
      secret: false,
      url: `https://book.calendbook.test/ada/${id}`,
      color: '#1e90ff',
      payload: {
        event_id: id,
        title: `Event ${id}`,
        duration_minutes: 30,
        description: 'A bookable event type',
      },
    })),
    overviews: EVENT_IDS.map((id) => ({
      upstreamEventId: id,
      band: 'days 0+',
      payload: { timezone: 'Europe/Berlin', windows: [{ startDate: dates[0], period: '28d', overview }] },
    })),
    slots: [...account.slots.values()].filter((s) => s.open),
  };
}

async function commit(db: TestDatabase, account: Account, nowMs: number, dayStartMs: number) {
  const now = new Date(nowMs);
  await commitSuccessfulSync(db.prisma, {
    connectionId: account.id,
    snapshot: snapshotOf(account, dayStartMs),
    run: { id: randomUUID(), jobId: null, attempt: 1, startedAt: now, callsByEndpoint: CALLS },
    now,
    next: new Date(nowMs + 3_600_000),
  });
}

async function tableSizes(db: TestDatabase) {
  await db.sql.query(`VACUUM ANALYZE ${TABLES.join(', ')}`);
  const sizes: Record<string, { rows: number; bytes: number }> = {};
  for (const table of TABLES) {
    const result = await db.sql.query<{ rows: string; bytes: string }>(
      `SELECT (SELECT count(*) FROM ${table}) AS rows, pg_total_relation_size('${table}') AS bytes`,
    );
    sizes[table] = { rows: Number(result.rows[0]?.rows), bytes: Number(result.rows[0]?.bytes) };
  }
  return sizes;
}

export async function benchGrowth(options: GrowthOptions = {}): Promise<BenchSection[]> {
  const connections = options.connections ?? 10;
  const slotsPerConnection = options.slotsPerConnection ?? 378;
  const days = options.days ?? 3;
  const changeShare = options.changeShare ?? 0.05;
  const syncsPerDay = options.syncsPerDay ?? 24;
  const syncMs = DAY_MS / syncsPerDay;
  // The day's churn (changeShare of the open slots each hour) spread over the day's syncs, a fraction carried.
  const sharePerSync = (changeShare * 24) / syncsPerDay;
  const carried = new Map<string, number>();
  const perDay = Math.round(slotsPerConnection / HORIZON_DAYS);
  const random = seededRandom(42);
  const db = await createTestDatabase('bench_growth');
  try {
    const startMs = Date.parse('2026-03-02T00:00:00Z');
    const accounts: Account[] = [];
    for (let c = 0; c < connections; c++) {
      const row = await db.prisma.connection.create({
        data: { upstreamUserId: `growth-${c}`, timezone: 'Europe/Berlin' },
      });
      const slots = new Map<string, FetchedSlot & { open: boolean }>();
      for (let d = 0; d < HORIZON_DAYS; d++)
        for (const s of dayOfSlots(startMs + d * DAY_MS, perDay))
          slots.set(`${s.eventId} ${s.startsAt.getTime()}`, { ...s, open: true });
      accounts.push({ id: row.id, slots });
      await commit(db, accounts[c] as Account, startMs, startMs);
    }
    const before = await tableSizes(db);
    await settlePostgresStatistics();
    const writesBefore = await rowWritesByTable({ db });

    for (let sync = 1; sync <= days * syncsPerDay; sync++) {
      const nowMs = startMs + Math.round(sync * syncMs);
      const day = Math.floor(sync / syncsPerDay);
      const dayStartMs = startMs + day * DAY_MS;
      for (const account of accounts) {
        if (sync % syncsPerDay === 0) {
          // Midnight: yesterday's slots leave the horizon, a new day enters it.
          for (const [key, s] of account.slots)
            if (s.startsAt.getTime() < dayStartMs) account.slots.delete(key);
          for (const s of dayOfSlots(dayStartMs + (HORIZON_DAYS - 1) * DAY_MS, perDay))
            account.slots.set(`${s.eventId} ${s.startsAt.getTime()}`, { ...s, open: true });
        }
        const all = [...account.slots.values()];
        const open = all.filter((s) => s.open);
        const closed = all.filter((s) => !s.open);
        // Hourly (the default) as before; at more syncs a day the fractions add up across syncs.
        const exact = open.length * sharePerSync + (carried.get(account.id) ?? 0);
        const changes = syncsPerDay === 24 ? Math.round(exact) : Math.floor(exact);
        carried.set(account.id, syncsPerDay === 24 ? 0 : exact - changes);
        // Half of the change is bookings (slots vanish), half cancellations (booked slots come back).
        for (let i = 0; i < Math.ceil(changes / 2); i++) {
          const s = open.splice(Math.floor(random() * open.length), 1)[0];
          if (s) s.open = false;
        }
        for (let i = 0; i < Math.floor(changes / 2) && closed.length > 0; i++) {
          const s = closed.splice(Math.floor(random() * closed.length), 1)[0];
          if (s) s.open = true;
        }
        await commit(db, account, nowMs, dayStartMs);
      }
    }
    await settlePostgresStatistics();
    const changeWrites = rowWritesBetween(writesBefore, await rowWritesByTable({ db }), (t) =>
      CHANGE_TABLES.has(t),
    );
    const after = await tableSizes(db);
    const perConnectionDay = connections * days;
    const figures: Record<string, number> = {};
    let rows = 0;
    let bytes = 0;
    for (const table of TABLES) {
      const addedRows = (after[table]?.rows ?? 0) - (before[table]?.rows ?? 0);
      const addedBytes = (after[table]?.bytes ?? 0) - (before[table]?.bytes ?? 0);
      rows += addedRows;
      bytes += addedBytes;
      figures[`${table}RowsPerConnectionDay`] = round(addedRows / perConnectionDay, 1);
    }
    check(rows > 0, 'the history did not grow at all');

    // Retention: the simulated days pruned at once (as if their age had passed), to measure what the daily
    // rollup keeps of them. A year's bytes then: sync runs for 90 days, closed slots (all the slot table's
    // growth: open slots stay as many) for 180, the rest and the rollup for 365.
    const endMs = startMs + days * DAY_MS;
    const pruned = await pruneHistory(
      db.prisma,
      { syncRunDays: 1, closedSlotDays: 1, batchSize: 5000 },
      { now: new Date(endMs + 2 * DAY_MS), pause: async () => undefined },
    );
    check(pruned.syncRuns > 0 && pruned.closedSlots > 0, 'pruning removed nothing');
    const afterPruning = await tableSizes(db);
    const bytesPerDay = (table: (typeof TABLES)[number], sizes = after) =>
      ((sizes[table]?.bytes ?? 0) - (before[table]?.bytes ?? 0)) / perConnectionDay;
    const rollupPerDay = bytesPerDay('sync_run_daily', afterPruning);
    const kept = TABLES.filter((t) => t !== 'slot' && t !== 'sync_run' && t !== 'sync_run_daily');
    const yearBefore = (bytes / perConnectionDay) * 365;
    const yearAfter =
      bytesPerDay('sync_run') * RETAINED_RUN_DAYS +
      bytesPerDay('slot') * RETAINED_CLOSED_SLOT_DAYS +
      kept.reduce((sum, t) => sum + bytesPerDay(t) * 365, 0) +
      rollupPerDay * 365;
    return [
      {
        benchmark: 'history growth',
        inputs: {
          connections,
          openSlotsPerConnection: slotsPerConnection,
          syncsPerDay,
          slotChangePerSync: `${round(sharePerSync * 100, 2)} % (half booked, half reopened)`,
          horizonDays: HORIZON_DAYS,
          daysSimulated: days,
        },
        figures: {
          ...figures,
          rowsPerConnectionDay: round(rows / perConnectionDay, 1),
          // Inserted, updated (a slot closed) and deleted rows of the history, as Postgres counts them.
          changeRowWritesPerConnectionDay: round(changeWrites / perConnectionDay, 1),
          kibPerConnectionDay: round(bytes / 1024 / perConnectionDay, 1),
          mibPerThousandConnectionsPerYear: round(((bytes / perConnectionDay) * 1000 * 365) / 2 ** 20, 0),
          mibPerConnectionYearWithoutRetention: round(yearBefore / 2 ** 20, 1),
          mibPerConnectionYearWithRetention: round(yearAfter / 2 ** 20, 1),
          rollupBytesPerConnectionDay: round(rollupPerDay, 0),
        },
      },
    ];
  } finally {
    await db.drop();
  }
}
