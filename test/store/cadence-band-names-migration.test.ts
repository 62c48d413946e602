// Renaming the cadence bands must not lose what is stored under their names: a connection's band state (when
// each band is next due, its adapted interval), current overviews, and the bands its past runs pulled all
// move to the new names, the ones SYNC_BANDS now parses to. Otherwise every band of every connection would fall
// due at once after the upgrade, with its adaptation forgotten.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { parseCadenceBands } from '../../src/config/sync-bands.js';
import { applyPendingMigrations } from '../../src/store/migrations/index.js';
import { createTestDatabase, MIGRATIONS_DIR, type TestDatabase } from '../support/db.js';
import { copyMigrations, type MigrationsCopy } from './helpers/migration-fixtures.js';

const MIGRATION = '20261126140000_cadence_band_names';
let db: TestDatabase | undefined;
let copy: MigrationsCopy | undefined;

afterAll(async () => {
  await db?.drop();
  await copy?.cleanup();
});

/** SYNC_BANDS values, and each band's name before this migration: `<from>-<to>d` (to excluded) or `<from>d+`. */
const CONFIGS = ['4d=10m,7d=40m,*=3h', '1d=5m,2d=10m,*=1h', '*=15m', '3d=10m,7d=30m,*=2h'];
function before(config: string): { old: string; now: string }[] {
  const parsed = parseCadenceBands(config);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.bands.map((band) => ({
    old: band.toDay === Infinity ? `${band.fromDay}d+` : `${band.fromDay}-${band.toDay}d`,
    now: band.name,
  }));
}

describe('the cadence_band_names migration', () => {
  it("moves band state, overviews and runs' bands to the names SYNC_BANDS parses to now", async () => {
    db = await createTestDatabase('cadence_band_names_migration', { migrate: false });
    copy = await copyMigrations();
    await copy.remove(MIGRATION);
    await applyPendingMigrations({ databaseUrl: db.url, migrationsDir: copy.dir });

    const connections = CONFIGS.map((config) => ({ id: randomUUID(), bands: before(config) }));
    for (const [i, { id, bands }] of connections.entries()) {
      const state = Object.fromEntries(
        bands.map((band, k) => [
          band.old,
          { dueAt: `2026-03-02T09:0${k}:00.000Z`, factor: 0.5 + k, calls: k },
        ]),
      );
      await db.sql.query(`INSERT INTO connection (id, upstream_user_id, band_state) VALUES ($1, $2, $3)`, [
        id,
        `u-${i}`,
        JSON.stringify(state),
      ]);
      for (const band of [...bands.map((b) => b.old), '']) {
        await db.sql.query(
          `INSERT INTO overview (connection_id, upstream_event_id, band, content_hash, payload) VALUES ($1, 'ev', $2, 'h', '{}')`,
          [id, band],
        );
      }
      await db.sql.query(
        `INSERT INTO sync_run (id, connection_id, outcome, bands)
         VALUES (gen_random_uuid(), $1, 'succeeded', $2), (gen_random_uuid(), $1, 'failed', '{}')`,
        [id, bands.map((b) => b.old).reverse()],
      );
    }
    await db.sql.query(
      `INSERT INTO connection (id, upstream_user_id, band_state) VALUES ($1, 'fresh', '{}')`,
      [randomUUID()],
    );

    await copy.write(
      MIGRATION,
      await readFile(path.join(MIGRATIONS_DIR, MIGRATION, 'migration.sql'), 'utf8'),
    );
    await applyPendingMigrations({ databaseUrl: db.url, migrationsDir: copy.dir });

    for (const { id, bands } of connections) {
      const [row] = (await db.sql.query(`SELECT band_state FROM connection WHERE id = $1`, [id])).rows;
      expect(row.band_state).toEqual(
        Object.fromEntries(
          bands.map((band, k) => [
            band.now,
            { dueAt: `2026-03-02T09:0${k}:00.000Z`, factor: 0.5 + k, calls: k },
          ]),
        ),
      );
      const overviews = (await db.sql.query(`SELECT band FROM overview WHERE connection_id = $1`, [id])).rows;
      expect(overviews.map((o) => o.band).sort()).toEqual([...bands.map((b) => b.now), ''].sort());
      const runs = (
        await db.sql.query(`SELECT outcome, bands FROM sync_run WHERE connection_id = $1 ORDER BY outcome`, [
          id,
        ])
      ).rows;
      expect(runs).toEqual([
        { outcome: 'succeeded', bands: bands.map((b) => b.now).reverse() },
        { outcome: 'failed', bands: [] },
      ]);
    }
    const [fresh] = (await db.sql.query(`SELECT band_state FROM connection WHERE upstream_user_id = 'fresh'`))
      .rows;
    expect(fresh.band_state).toEqual({});
  });
});
