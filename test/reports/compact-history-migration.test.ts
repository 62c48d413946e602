// An installation from before compact history moves to it (issue 43, 1): a database migrated up to the migration
// before compact_history holds a generated history row by row (mixed-history.ts), the remaining migrations are
// applied with slotfeed's runner, and every report (report-answers.ts) then answers as it does over the same
// history generated row by row in a database migrated to the end, where nothing is packed; and again once the
// retention run has stored the reports' days (report_days, the migration after it).
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { applyPendingMigrations } from '../../src/store/migrations/index.js';
import { pruneHistory } from '../../src/store/retention.js';
import { createTestDatabase, MIGRATIONS_DIR, type TestDatabase } from '../support/db.js';
import { generateMixedHistory, HISTORY_NOW } from './mixed-history.js';
import { allReportAnswers, differingAnswers } from './report-answers.js';

const COMPACT_HISTORY = '20261128160000_compact_history';

let migrated: TestDatabase;
let upgraded: TestDatabase;
let oldMigrations: string;

beforeAll(async () => {
  // The migrations folder as it was before compact_history: every migration older than it.
  oldMigrations = mkdtempSync(path.join(os.tmpdir(), 'slotfeed-old-migrations-'));
  for (const entry of readdirSync(MIGRATIONS_DIR)) {
    if (entry >= COMPACT_HISTORY && entry !== 'migration_lock.toml') continue;
    cpSync(path.join(MIGRATIONS_DIR, entry), path.join(oldMigrations, entry), { recursive: true });
  }
  migrated = await createTestDatabase('compact_history_fresh');
  upgraded = await createTestDatabase('compact_history_upgraded', { migrate: false });
  await applyPendingMigrations({ databaseUrl: upgraded.url, migrationsDir: oldMigrations });
}, 120_000);

afterAll(async () => {
  await migrated?.drop();
  await upgraded?.drop();
  if (oldMigrations) rmSync(oldMigrations, { recursive: true, force: true });
});

describe('the compact_history migration', () => {
  it('packs the history an installation holds, and every report answers as before', async () => {
    const tables = async (db: TestDatabase) =>
      (await db.sql.query(`SELECT to_regclass('slot_history') AS t`)).rows[0]?.t as string | null;
    expect(await tables(upgraded)).toBeNull();

    const ids = await generateMixedHistory(migrated.prisma);
    expect(await generateMixedHistory(upgraded.prisma)).toEqual(ids);
    const count = async (db: TestDatabase, table: string) =>
      Number((await db.sql.query(`SELECT count(*) AS n FROM ${table}`)).rows[0]?.n);
    const slotsBefore = await count(upgraded, 'slot');
    const runsBefore = await count(upgraded, 'sync_run');
    expect(slotsBefore).toBe(await count(migrated, 'slot'));

    const applied = await applyPendingMigrations({
      databaseUrl: upgraded.url,
      migrationsDir: MIGRATIONS_DIR,
    });
    expect(applied.applied).toContain(COMPACT_HISTORY);
    // The history (all of it before the day the migration ran) left the row tables: open slots stay.
    expect(await count(upgraded, 'slot')).toBe(
      Number((await upgraded.sql.query(`SELECT count(*) AS n FROM slot WHERE gone_at IS NULL`)).rows[0]?.n),
    );
    expect(await count(upgraded, 'slot')).toBeLessThan(slotsBefore / 2);
    expect(await count(upgraded, 'sync_run')).toBe(1); // the one run without an end
    expect(runsBefore).toBeGreaterThan(10_000);
    expect(await count(upgraded, 'slot_history')).toBeGreaterThan(0);

    const rowByRow = await allReportAnswers(migrated.prisma, ids);
    const packed = await allReportAnswers(upgraded.prisma, ids);
    expect([...packed.keys()]).toEqual([...rowByRow.keys()]);
    expect(differingAnswers(rowByRow, packed)).toEqual([]);

    // The report_days migration stores nothing itself: the next retention run stores the days that are over,
    // every connection's, and the reports still answer the same.
    expect(applied.applied).toContain('20261129180000_report_days');
    expect(await count(upgraded, 'utilization_day')).toBe(0);
    const stored = await pruneHistory(
      upgraded.prisma,
      { syncRunDays: 0, closedSlotDays: 0, compactAfterDays: 1, batchSize: 1000 },
      { now: HISTORY_NOW, pause: async () => undefined },
    );
    expect(stored.reportDaysStored).toBeGreaterThan(100);
    expect(await count(upgraded, 'report_days_stored')).toBe(ids.connections.length);
    const fromStored = await allReportAnswers(upgraded.prisma, ids);
    expect(differingAnswers(rowByRow, fromStored)).toEqual([]);
  }, 400_000);
});
