// Benchmark: the two ways the issue offered to keep history from growing without bound, measured on the same
// rows. (a) What slotfeed does: batched DELETEs of rows past their age, each batch its own transaction, on the
// existing tables. (b) Monthly partitions of the big tables, each dropped whole once all its rows are past
// their age. Measured: the time to remove a month of sync runs either way and the longest lock either holds,
// a report's query over the retained range on both layouts, and the cost partitions add to what syncs do
// every few minutes: writing run rows and closing slots (a slot partitioned by when it closed moves to another
// partition as it closes: its UPDATE becomes a DELETE and an INSERT).
import { check, type BenchSection } from './bench-result.js';
import { createTestDatabase } from '../support/db.js';
import { round } from './process-stats.js';

export interface RetentionStrategyOptions {
  connections: number;
  /** Days of history: runs every 15 minutes per connection. */
  days: number;
}

const BATCH = 1000;
const MONTH_START = '2026-01-01';

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

export async function benchRetentionStrategies(options: RetentionStrategyOptions): Promise<BenchSection[]> {
  const db = await createTestDatabase('bench_partitions', { migrate: false });
  const sql = db.sql;
  try {
    // Two copies of the same runs: plain (as slotfeed keeps them) and partitioned by month of started_at.
    const columns = `id bigint NOT NULL, connection_id int NOT NULL, started_at timestamptz NOT NULL,
      outcome text NOT NULL, upstream_calls int NOT NULL, seconds float8 NOT NULL`;
    await sql.query(`CREATE TABLE run_plain (${columns}, PRIMARY KEY (id))`);
    await sql.query(`CREATE INDEX ON run_plain (connection_id, started_at)`);
    await sql.query(`CREATE INDEX ON run_plain (started_at)`);
    await sql.query(
      `CREATE TABLE run_part (${columns}, PRIMARY KEY (id, started_at)) PARTITION BY RANGE (started_at)`,
    );
    await sql.query(`CREATE INDEX ON run_part (connection_id, started_at)`);
    const months = Math.ceil(options.days / 28) + 1;
    for (let m = 0; m < months; m++) {
      await sql.query(
        `CREATE TABLE run_part_${m} PARTITION OF run_part FOR VALUES FROM (date '${MONTH_START}' + interval '${m} month') TO (date '${MONTH_START}' + interval '${m + 1} month')`,
      );
    }
    const fill = (table: string) =>
      sql.query(`INSERT INTO ${table}
        SELECT row_number() OVER (), c, date '${MONTH_START}' + q * interval '15 minutes',
               CASE WHEN random() < 0.02 THEN 'failed' ELSE 'succeeded' END, 40 + (random() * 10)::int, random()
        FROM generate_series(1, ${options.connections}) c, generate_series(0, ${options.days * 96 - 1}) q`);
    const filledPlain = await timed(() => fill('run_plain'));
    const filledPart = await timed(() => fill('run_part'));
    await sql.query('ANALYZE run_plain; ANALYZE run_part');
    const rows = Number((await sql.query('SELECT count(*) AS n FROM run_plain')).rows[0].n);

    // A report over the retained range (after the first month): runs, success and calls per connection.
    const report = (table: string) =>
      sql.query(`SELECT connection_id, count(*), avg(upstream_calls), count(*) FILTER (WHERE outcome = 'succeeded')
        FROM ${table} WHERE started_at >= date '${MONTH_START}' + interval '1 month' GROUP BY 1`);
    await report('run_plain');
    await report('run_part');
    const reportPlain = await timed(() => report('run_plain'));
    const reportPart = await timed(() => report('run_part'));

    // One commit's run row, as a sync writes it: 200 of them, one statement each.
    const insertRuns = async (table: string, base: number) => {
      for (let i = 0; i < 200; i++) {
        // At the end of the history (the newest partition), as a sync's run row would be.
        await sql.query(
          `INSERT INTO ${table} VALUES ($1, 1, date '${MONTH_START}' + interval '${options.days} days' - interval '1 minute', 'succeeded', 44, 0.5)`,
          [base + i],
        );
      }
    };
    const insertPlain = await timed(() => insertRuns('run_plain', 10_000_000_000));
    const insertPart = await timed(() => insertRuns('run_part', 10_000_000_000));

    // Removing the oldest month: batched deletes (each batch its own transaction) versus DETACH + DROP.
    const cutoff = `date '${MONTH_START}' + interval '1 month'`;
    let batches = 0;
    let longestBatchMs = 0;
    const deleted = await timed(async () => {
      for (;;) {
        const batch = await timed(() =>
          sql.query(
            `DELETE FROM run_plain WHERE id IN (SELECT id FROM run_plain WHERE started_at < ${cutoff} LIMIT ${BATCH})`,
          ),
        );
        longestBatchMs = Math.max(longestBatchMs, batch.ms);
        batches++;
        if ((batch.value.rowCount ?? 0) < BATCH) break;
      }
    });
    const dropped = await timed(async () => {
      await sql.query('ALTER TABLE run_part DETACH PARTITION run_part_0');
      await sql.query('DROP TABLE run_part_0');
    });

    // Closing slots: plain (an UPDATE in place) versus partitioned by month of gone_at (open slots in a
    // default partition, so each close moves the row).
    await sql.query(
      `CREATE TABLE slot_plain (id bigint PRIMARY KEY, starts_at timestamptz NOT NULL, gone_at timestamptz)`,
    );
    await sql.query(`CREATE TABLE slot_part (id bigint NOT NULL, starts_at timestamptz NOT NULL, gone_at timestamptz)
      PARTITION BY RANGE (gone_at)`);
    await sql.query(`CREATE TABLE slot_part_open PARTITION OF slot_part DEFAULT`);
    await sql.query(
      `CREATE TABLE slot_part_closed PARTITION OF slot_part FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')`,
    );
    for (const table of ['slot_plain', 'slot_part']) {
      await sql.query(
        `INSERT INTO ${table} SELECT g, now() + g * interval '30 minutes', NULL FROM generate_series(1, 200000) g`,
      );
    }
    await sql.query('CREATE INDEX ON slot_part (id)');
    await sql.query('ANALYZE slot_plain; ANALYZE slot_part');
    // A commit closes ~1 % of a connection's slots: 100 statements of 20 ids each.
    const close = async (table: string) => {
      for (let i = 0; i < 100; i++) {
        const ids = Array.from({ length: 20 }, (_, j) => 1 + i * 20 + j);
        await sql.query(
          `UPDATE ${table} SET gone_at = timestamptz '2026-06-01' WHERE id = ANY($1::bigint[])`,
          [ids],
        );
      }
    };
    const closePlain = await timed(() => close('slot_plain'));
    const closePart = await timed(() => close('slot_part'));
    check(
      Number((await sql.query('SELECT count(*) AS n FROM slot_part_closed')).rows[0].n) === 2000,
      'closing a slot did not move it to the closed partition',
    );

    return [
      {
        benchmark: 'retention: batched deletes vs monthly partitions',
        inputs: {
          connections: options.connections,
          days: options.days,
          'sync run rows': rows,
          'delete batch': BATCH,
          'fill s (plain / partitioned)': `${round(filledPlain.ms / 1000, 1)} / ${round(filledPart.ms / 1000, 1)}`,
        },
        figures: {
          'remove the oldest month: batched deletes, total s': round(deleted.ms / 1000, 2),
          'batched deletes: batches': batches,
          'batched deletes: longest batch ms (longest lock)': round(longestBatchMs, 1),
          'remove the oldest month: detach + drop partition, ms': round(dropped.ms, 1),
          'report over the retained range, ms (plain / partitioned)': `${round(reportPlain.ms, 0)} / ${round(reportPart.ms, 0)}`,
          '200 run-row inserts, ms (plain / partitioned)': `${round(insertPlain.ms, 0)} / ${round(insertPart.ms, 0)}`,
          '2,000 slot closes in 100 statements, ms (plain / partitioned by gone_at)': `${round(closePlain.ms, 0)} / ${round(closePart.ms, 0)}`,
        },
      },
    ];
  } finally {
    await db.drop();
  }
}
