// Benchmark 5 (storage): rows and bytes the history grows by, per connection per day, at a realistic change
// rate: 5 % of the open slots change every hour (booked away, and as many reopened), and once a day the horizon
// moves on (a day of slots expires, a new one opens, each overview's payload changes). Two schedules: hourly
// syncs of the whole horizon, and the default SYNC_BANDS (each band pulled on its own interval, every pull one
// run that commits the bands due, their dates' slots and overviews; the hour's change spread over its runs).
// Synthetic snapshots go through commitSuccessfulSync, as a worker's would, into a fresh database. Then the
// history is packed as the compaction packs it (store/history-compaction.ts) and measured again. Sizes are
// Postgres's own (pg_total_relation_size: heap, indexes, TOAST): after VACUUM for the rows as syncs leave them
// (dead versions count where VACUUM cannot reuse their space, as before), and after VACUUM FULL for both forms
// side by side (the space compaction frees is what later days' rows reuse).
import { randomUUID } from 'node:crypto';
import { commitSuccessfulSync, type SnapshotInput } from '../../src/store/snapshots.js';
import type { FetchedSlot } from '../../src/store/slot-diff.js';
import { pruneHistory } from '../../src/store/retention.js';
import { describeVariables } from '../../src/config.js';
import { parseCadenceBands, type CadenceBand } from '../../src/config/sync-bands.js';
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
  'slot_history',
  'sync_run_history',
] as const;
type Table = (typeof TABLES)[number];

/** A variable's default, as slotfeed declares it (src/config/variables-*.ts). */
function defaultOf(name: string): string {
  const found = describeVariables().find((v) => v.name === name)?.default;
  if (found === undefined) throw new Error(`${name} has no default`);
  return found;
}

/** The retention defaults the year is computed with: RETENTION_SYNC_RUNS_DAYS, _CLOSED_SLOTS_DAYS, _COMPACT_AFTER_DAYS. */
const RETAINED_RUN_DAYS = Number(defaultOf('RETENTION_SYNC_RUNS_DAYS'));
const RETAINED_CLOSED_SLOT_DAYS = Number(defaultOf('RETENTION_CLOSED_SLOTS_DAYS'));
const COMPACT_AFTER_DAYS = Number(defaultOf('RETENTION_COMPACT_AFTER_DAYS'));
/** The target: a connection-year with the default retention and bands. */
const TARGET_MIB_PER_CONNECTION_YEAR = 3;
const EVENT_IDS = ['evt_a', 'evt_b', 'evt_c'];
const HORIZON_DAYS = 28;
const DAY_MS = 86_400_000;
const CALLS = {
  'GET /users/me': 1,
  'GET /events': 1,
  'GET /calendars/{event_id}': 3,
  'GET /calendars/{event_id}/slots': 60,
};

export type GrowthSchedule = 'hourly' | 'default bands';

export interface GrowthOptions {
  schedule?: GrowthSchedule;
  connections?: number;
  /** Open slots per connection; the sync round's average is ~380 with 3 event types over 28 days. */
  slotsPerConnection?: number;
  days?: number;
  /** Share of the open slots that change per hourly sync: the day's churn, whatever the syncs per day. */
  changeShare?: number;
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

const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The horizon's dates from the day that begins at dayStartMs, and those of each band (every date is bookable). */
function bandDates(band: CadenceBand, dayStartMs: number): string[] {
  const until = Math.min(band.toDay, HORIZON_DAYS);
  return Array.from({ length: until - band.fromDay }, (_, i) =>
    dateOf(dayStartMs + (band.fromDay + i) * DAY_MS),
  );
}

function overviewPayload(dates: string[]) {
  return {
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
}

function snapshotOf(
  account: Account,
  dayStartMs: number,
  bands: readonly CadenceBand[],
  due: readonly CadenceBand[],
): SnapshotInput {
  const pulled = due.map((band) => ({ band, dates: bandDates(band, dayStartMs) }));
  const pulledDates = new Set(pulled.flatMap((p) => p.dates));
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
    overviews: pulled.flatMap(({ band, dates }) =>
      EVENT_IDS.map((id) => ({
        upstreamEventId: id,
        band: band.name,
        payload: {
          timezone: 'Europe/Berlin',
          windows: [{ startDate: dates[0], period: `${dates.length}d`, overview: overviewPayload(dates) }],
        },
      })),
    ),
    slots: [...account.slots.values()].filter((s) => s.open && pulledDates.has(dateOf(s.startsAt.getTime()))),
    horizon: {
      zone: 'Europe/Berlin',
      dates: Array.from({ length: HORIZON_DAYS }, (_, i) => dateOf(dayStartMs + i * DAY_MS)),
      bandNames: bands.map((band) => band.name),
      bands: pulled.map(({ band, dates }) => ({ name: band.name, dates, calls: dates.length * 3 })),
    },
  };
}

async function commit(
  db: TestDatabase,
  account: Account,
  nowMs: number,
  dayStartMs: number,
  bands: readonly CadenceBand[],
  due: readonly CadenceBand[],
) {
  const now = new Date(nowMs);
  await commitSuccessfulSync(db.prisma, {
    connectionId: account.id,
    snapshot: snapshotOf(account, dayStartMs, bands, due),
    run: { id: randomUUID(), jobId: null, attempt: 1, startedAt: now, callsByEndpoint: CALLS },
    now,
    next: new Date(nowMs + 3_600_000),
  });
}

async function tableSizes(db: TestDatabase, full = false) {
  await db.sql.query(`VACUUM ${full ? 'FULL ' : ''}ANALYZE ${TABLES.join(', ')}`);
  const sizes: Record<string, { rows: number; bytes: number }> = {};
  for (const table of TABLES) {
    const result = await db.sql.query<{ rows: string; bytes: string }>(
      `SELECT (SELECT count(*) FROM ${table}) AS rows, pg_total_relation_size('${table}') AS bytes`,
    );
    sizes[table] = { rows: Number(result.rows[0]?.rows), bytes: Number(result.rows[0]?.bytes) };
  }
  return sizes;
}

/** The bands of a schedule: the whole horizon hourly, or the default SYNC_BANDS. */
function scheduleBands(schedule: GrowthSchedule): CadenceBand[] {
  if (schedule === 'hourly') return [{ name: 'days 0+', fromDay: 0, toDay: Infinity, intervalSeconds: 3600 }];
  const parsed = parseCadenceBands(defaultOf('SYNC_BANDS'));
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.bands;
}

type Sizes = Record<string, { rows: number; bytes: number }>;

export async function benchGrowth(options: GrowthOptions = {}): Promise<BenchSection[]> {
  const schedule = options.schedule ?? 'hourly';
  const connections = options.connections ?? 10;
  const slotsPerConnection = options.slotsPerConnection ?? 378;
  const days = options.days ?? 3;
  const changeShare = options.changeShare ?? 0.05;
  const perDay = Math.round(slotsPerConnection / HORIZON_DAYS);
  const bands = scheduleBands(schedule);
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
      await commit(db, accounts[c] as Account, startMs, startMs, bands, bands);
    }
    const before = await tableSizes(db);
    await settlePostgresStatistics();
    const writesBefore = await rowWritesByTable({ db });
    const beforeFull = await tableSizes(db, true);

    let runs = 0;
    let lastRunMinute = 0;
    for (let minute = 1; minute <= days * 1440; minute++) {
      const due = bands.filter((band) => (minute * 60) % band.intervalSeconds === 0);
      if (due.length === 0) continue;
      const nowMs = startMs + minute * 60_000;
      const dayStartMs = startMs + Math.floor(minute / 1440) * DAY_MS;
      // The hour's change, spread over its runs: what happened since the last one.
      const share = (changeShare * (minute - lastRunMinute)) / 60;
      lastRunMinute = minute;
      for (const account of accounts) {
        if (minute % 1440 === 0) {
          // Midnight: yesterday's slots leave the horizon, a new day enters it.
          for (const [key, s] of account.slots)
            if (s.startsAt.getTime() < dayStartMs) account.slots.delete(key);
          for (const s of dayOfSlots(dayStartMs + (HORIZON_DAYS - 1) * DAY_MS, perDay))
            account.slots.set(`${s.eventId} ${s.startsAt.getTime()}`, { ...s, open: true });
        }
        const all = [...account.slots.values()];
        const open = all.filter((s) => s.open);
        const closed = all.filter((s) => !s.open);
        // Half of the change is bookings (slots vanish), half cancellations (booked slots come back); a
        // fraction of a change happens with that chance.
        const changes = open.length * share;
        const whole = (n: number) => Math.floor(n) + (random() < n - Math.floor(n) ? 1 : 0);
        for (let i = 0; i < whole(changes / 2); i++) {
          const s = open.splice(Math.floor(random() * open.length), 1)[0];
          if (s) s.open = false;
        }
        for (let i = 0; i < whole(changes / 2) && closed.length > 0; i++) {
          const s = closed.splice(Math.floor(random() * closed.length), 1)[0];
          if (s) s.open = true;
        }
        await commit(db, account, nowMs, dayStartMs, bands, due);
        runs += 1;
      }
    }
    await settlePostgresStatistics();
    const changeWrites = rowWritesBetween(writesBefore, await rowWritesByTable({ db }), (t) =>
      CHANGE_TABLES.has(t),
    );
    const after = await tableSizes(db);
    const afterFull = await tableSizes(db, true);
    const perConnectionDay = connections * days;
    const grown = (table: Table, sizes: Sizes, from: Sizes, what: 'rows' | 'bytes') =>
      ((sizes[table]?.[what] ?? 0) - (from[table]?.[what] ?? 0)) / perConnectionDay;
    const total = (sizes: Sizes, from: Sizes, what: 'rows' | 'bytes') =>
      TABLES.reduce((sum, table) => sum + grown(table, sizes, from, what), 0);
    check(total(after, before, 'rows') > 0, 'the history did not grow at all');

    // The old form's year with the defaults, as before: sync runs for 90 days, closed slots (all the slot
    // table's growth: open slots stay as many) for 180, the rest and the daily rollup for 365; the rollup's
    // bytes measured by pruning the simulated days at once (as if their age had passed) in a copy of the
    // figures: here, by rolling the packed runs up below.
    const endMs = startMs + days * DAY_MS;
    // The new form: every simulated day packed, as the compaction does a day after (its cutoff is the end).
    const packed = await pruneHistory(
      db.prisma,
      { syncRunDays: 0, closedSlotDays: 0, compactAfterDays: 1, batchSize: 5000 },
      { now: new Date(endMs + DAY_MS), pause: async () => undefined },
    );
    check(packed.packedSlots > 0 && packed.packedSyncRuns > 0, 'the compaction packed nothing');
    const compacted = await tableSizes(db, true);
    // A day's packed row in steady state holds every slot that starts on it (~the slot rows a connection-day
    // adds); the simulated days spread theirs over the horizon's start days. So the packed slots are measured
    // as the steady state stores them: regrouped into rows of a day's number each, then their columns' stored
    // (compressed) sizes, a tuple header and item pointer, and an index entry per index (32 bytes each).
    const slotRowsPerDay = Math.max(1, Math.round(grown('slot', after, before, 'rows')));
    await db.sql.query(`CREATE TABLE slot_history_steady (LIKE slot_history INCLUDING ALL)`);
    await db.sql.query(`INSERT INTO slot_history_steady
      SELECT connection_id, date '2000-01-01' + chunk::int, MIN(seen), MAX(seen), MAX(gone), MIN(event_ids::text)::text[],
             array_agg(e ORDER BY n), array_agg(start_ms ORDER BY n), array_agg(length_ms ORDER BY n),
             array_agg(seen_ms ORDER BY n), array_agg(gone_ms ORDER BY n), array_agg(reason ORDER BY n)
      FROM (SELECT h.connection_id, h.event_ids, u.*, (row_number() OVER w - 1) / ${slotRowsPerDay} AS chunk,
                   row_number() OVER w AS n, now() AS seen, now() AS gone
            FROM slot_history h, unnest(h.event_index, h.start_ms, h.length_ms, h.seen_ms, h.gone_ms, h.close_reason)
              AS u(e, start_ms, length_ms, seen_ms, gone_ms, reason)
            WINDOW w AS (PARTITION BY h.connection_id ORDER BY h.day, u.start_ms)) x
      GROUP BY connection_id, chunk`);
    const storedPerElement = async (table: string, arrays: string[], counted: string) => {
      const indexes = Number(
        (await db.sql.query(`SELECT count(*) AS n FROM pg_indexes WHERE tablename = $1`, [table])).rows[0]?.n,
      );
      const sizes = arrays.map((c) => `pg_column_size(h.${c})`).join(' + ');
      const result = await db.sql.query<{ bytes: string; elements: string }>(
        `SELECT SUM(${sizes} + 24 + 8 * 5 + 4 + ${indexes} * 32) AS bytes, SUM(cardinality(h.${counted})) AS elements
         FROM ${table} h`,
      );
      return Number(result.rows[0]?.bytes) / Math.max(1, Number(result.rows[0]?.elements));
    };
    const slotArrays = [
      'event_ids',
      'event_index',
      'start_ms',
      'length_ms',
      'seen_ms',
      'gone_ms',
      'close_reason',
    ];
    const storedPerSlot = await storedPerElement('slot_history_steady', slotArrays, 'start_ms');
    const storedPerRun = await storedPerElement(
      'sync_run_history',
      [
        'started_ms',
        'duration_ms',
        'outcome',
        'upstream_calls',
        'error_code',
        'error_message',
        'stale_band_names',
        'stale_run',
        'stale_band',
        'stale_bound_seconds',
        'stale_changes',
        'calls_by_endpoint',
      ],
      'started_ms',
    );
    /** A row of a table that keeps a row per thing: its stored size, an item pointer, an entry per index. */
    const bytesPerRow = async (table: Table) => {
      const result = await db.sql.query<{ bytes: string | null }>(
        `SELECT AVG(pg_column_size(t.*)) + 4 + (SELECT count(*) FROM pg_indexes WHERE tablename = '${table}') * 32
           AS bytes FROM ${table} t`,
      );
      return Number(result.rows[0]?.bytes ?? 0);
    };
    // Then the packed days past every age: runs rolled up into sync_run_daily, slot days deleted.
    const pruned = await pruneHistory(
      db.prisma,
      { syncRunDays: 1, closedSlotDays: 1, compactAfterDays: 1, batchSize: 5000 },
      { now: new Date(endMs + 3 * DAY_MS), pause: async () => undefined },
    );
    check(pruned.syncRunDays > 0 && pruned.closedSlotDays > 0, 'pruning removed nothing');
    const afterPruning = await tableSizes(db, true);
    const rollupPerDay =
      grown('sync_run_daily', afterPruning, beforeFull, 'rows') * (await bytesPerRow('sync_run_daily'));

    const bytesPerDay = (table: Table, sizes: Sizes = after, from: Sizes = before) =>
      grown(table, sizes, from, 'bytes');
    const kept = ['booking', 'overview', 'event_type', 'profile'] as const;
    const yearBefore = total(after, before, 'bytes') * 365;
    const yearOldForm =
      bytesPerDay('sync_run') * RETAINED_RUN_DAYS +
      bytesPerDay('slot') * RETAINED_CLOSED_SLOT_DAYS +
      kept.reduce((sum, t) => sum + bytesPerDay(t) * 365, 0) +
      rollupPerDay * (365 - RETAINED_RUN_DAYS);
    // The new form's year: today's runs, closes and superseded overviews row by row (COMPACT_AFTER_DAYS days at
    // most), packed runs to 90 days, packed slots to 180, the rollup after; bookings, event type and profile
    // versions for the year, a row each.
    const fullDays = COMPACT_AFTER_DAYS;
    const packedSlotsPerDay = storedPerSlot * grown('slot', after, before, 'rows');
    const packedRunsPerDay = storedPerRun * grown('sync_run', after, before, 'rows');
    let keptPerDay = 0;
    for (const table of ['booking', 'event_type', 'profile'] as const)
      keptPerDay += grown(table, after, before, 'rows') * (await bytesPerRow(table));
    const yearNewForm =
      (bytesPerDay('sync_run', afterFull, beforeFull) +
        bytesPerDay('slot', afterFull, beforeFull) +
        bytesPerDay('overview', afterFull, beforeFull)) *
        fullDays +
      packedRunsPerDay * (RETAINED_RUN_DAYS - fullDays) +
      packedSlotsPerDay * (RETAINED_CLOSED_SLOT_DAYS - fullDays) +
      keptPerDay * 365 +
      rollupPerDay * (365 - RETAINED_RUN_DAYS);
    // An upper bound: the packed tables as this short run leaves them (each day's closes spread over the horizon's
    // start days, rows a fraction of a steady day's; whole pages, minimum index sizes).
    const yearNewFormUpperBound =
      yearNewForm -
      packedRunsPerDay * (RETAINED_RUN_DAYS - fullDays) -
      packedSlotsPerDay * (RETAINED_CLOSED_SLOT_DAYS - fullDays) +
      bytesPerDay('sync_run_history', compacted, beforeFull) * (RETAINED_RUN_DAYS - fullDays) +
      bytesPerDay('slot_history', compacted, beforeFull) * (RETAINED_CLOSED_SLOT_DAYS - fullDays);
    const mib = (bytes: number) => round(bytes / 2 ** 20, 2);
    const figures: Record<string, number> = {};
    for (const table of TABLES) {
      figures[`${table} rows per connection-day`] = round(grown(table, after, before, 'rows'), 1);
      figures[`${table} packed rows per connection-day`] = round(
        grown(table, compacted, beforeFull, 'rows'),
        2,
      );
      figures[`${table} KiB per connection-day (VACUUM FULL)`] = round(
        grown(table, afterFull, beforeFull, 'bytes') / 1024,
        2,
      );
      figures[`${table} packed KiB per connection-day`] = round(
        grown(table, compacted, beforeFull, 'bytes') / 1024,
        2,
      );
    }
    const packedTotal = total(compacted, beforeFull, 'bytes');
    return [
      {
        benchmark: `history growth, ${schedule === 'hourly' ? 'hourly syncs' : 'the default SYNC_BANDS'}`,
        inputs: {
          connections,
          openSlotsPerConnection: slotsPerConnection,
          schedule: bands.map((b) => `${b.name} every ${b.intervalSeconds / 60} min`).join(', '),
          syncsPerConnectionDay: round(runs / perConnectionDay, 1),
          slotChangePerHour: `${changeShare * 100} % (half booked, half reopened)`,
          horizonDays: HORIZON_DAYS,
          daysSimulated: days,
          retention: `runs ${RETAINED_RUN_DAYS} d, closed slots ${RETAINED_CLOSED_SLOT_DAYS} d, packed after ${COMPACT_AFTER_DAYS} d`,
        },
        figures: {
          ...figures,
          rowsPerConnectionDay: round(total(after, before, 'rows'), 1),
          // Inserted, updated (a slot closed) and deleted rows of the history, as Postgres counts them.
          changeRowWritesPerConnectionDay: round(changeWrites / perConnectionDay, 1),
          kibPerConnectionDay: round(total(after, before, 'bytes') / 1024, 1),
          packedRowsPerConnectionDay: round(total(compacted, beforeFull, 'rows'), 1),
          packedKibPerConnectionDay: round(packedTotal / 1024, 1),
          mibPerConnectionYearWithoutRetention: mib(yearBefore),
          mibPerConnectionYearWithRetentionRowByRow: mib(yearOldForm),
          // The form history is kept in: packed once a day is past (what the capacity model multiplies).
          mibPerConnectionYearWithRetention: mib(yearNewForm),
          mibPerConnectionYearWithRetentionPackedUpperBound: mib(yearNewFormUpperBound),
          rollupBytesPerConnectionDay: round(rollupPerDay, 0),
          storedBytesPerPackedSlot: round(storedPerSlot, 1),
          storedBytesPerPackedRun: round(storedPerRun, 1),
        },
        targets: {
          [`≤ ${TARGET_MIB_PER_CONNECTION_YEAR} MiB per connection-year, default retention`]: {
            target: `${mib(yearNewForm)} MiB`,
            met: yearNewForm / 2 ** 20 <= TARGET_MIB_PER_CONNECTION_YEAR,
          },
        },
      },
    ];
  } finally {
    await db.drop();
  }
}
