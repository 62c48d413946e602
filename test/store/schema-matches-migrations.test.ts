// prisma/migrations and schema.prisma describe the same database. A database migrated by slotfeed's runner is
// compared with what Prisma itself reads from schema.prisma (its DMMF): enums, tables, columns (type,
// precision, nullability, default), indexes (name, columns, uniqueness) and foreign keys (name, columns,
// target, ON DELETE/UPDATE). A schema change without its migration, or the reverse, fails here.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, MIGRATIONS_DIR, type TestDatabase } from '../support/db.js';
import { expectedCatalog } from './helpers/expected-schema.js';
import { loadDatamodel } from './helpers/load-dmmf.js';
import { readCatalog, sortCatalog, type CatalogIndex, type DatabaseCatalog } from './helpers/read-catalog.js';

const SCHEMA_PATH = path.resolve(MIGRATIONS_DIR, '..', 'schema.prisma');

/**
 * What the migrations add that schema.prisma does not state, each with the reason. Keep this list short: every
 * entry is a place where the schema file is not the whole truth.
 */
/** LISTS_INDEXED as Postgres prints it back. */
const AVAILABILITY_LISTS_INDEXED =
  '(((cardinality(seen_at) + cardinality(closed_early_at)) <= 64) AND (octet_length(upstream_event_id) <= 512))';

const NOT_IN_SCHEMA: CatalogIndex[] = [
  // At most one open row per slot. Prisma 7.10 states partial indexes only through its `partialIndexes`
  // preview, whose client then treats the columns as a unique key (findUnique may return a closed row).
  {
    table: 'slot',
    name: 'slot_open_key',
    columns: ['connection_id', 'upstream_event_id', 'starts_at'],
    included: [],
    unique: true,
    primary: false,
    predicate: '(gone_at IS NULL)',
  },
  // The webhook deliveries still pending, which the dispatcher and the lost-job sweep read.
  {
    table: 'webhook_delivery',
    name: 'webhook_delivery_pending_idx',
    columns: ['created_at', 'id'],
    included: [],
    unique: false,
    primary: false,
    predicate: '((delivered_at IS NULL) AND (given_up_at IS NULL))',
  },
  // Availability days with lists short enough for an index entry, read from it alone, and the others, read from the
  // table (20261202400000_availability_days_covered; availability-days.ts, LISTS_INDEXED).
  {
    table: 'availability_day',
    name: 'availability_day_lists_idx',
    columns: ['connection_id', 'upstream_event_id', 'day'],
    included: [
      'seen_at',
      'seen_slots',
      'seen_ms',
      'closed_early_at',
      'closed_early_slots',
      'closed_early_ms',
    ],
    unique: false,
    primary: false,
    predicate: AVAILABILITY_LISTS_INDEXED,
  },
  {
    table: 'availability_day',
    name: 'availability_day_long_lists_idx',
    columns: ['connection_id', 'upstream_event_id', 'day'],
    included: [],
    unique: false,
    primary: false,
    predicate: `(NOT ${AVAILABILITY_LISTS_INDEXED})`,
  },
];

/**
 * Columns the migrations add to an index of schema.prisma beside its key (INCLUDE), which Prisma 7.10 cannot state.
 * The report days' keys hold their figures, so that a report reads each connection's days from the key alone, in
 * order (20261201190000_report_days_in_key_order), and the stored weeks' theirs; a connection's bookings by detection
 * hold their start and end, so that the weeks and today's bookings after the stored ones read no heap page
 * (20261202000000_booking_weeks).
 */
const INCLUDED_NOT_IN_SCHEMA: Record<string, string[]> = {
  utilization_day_pkey: ['offered_minutes', 'bookings', 'booked_minutes'],
  booking_day_pkey: ['bookings', 'booked_minutes', 'median_lead_hours', 'mean_lead_hours', 'opened'],
  booking_week_pkey: ['bookings', 'booked_minutes', 'median_lead_hours', 'mean_lead_hours', 'opened'],
  booking_connection_id_detected_at_idx: ['starts_at', 'ends_at'],
};

let db: TestDatabase;
let actual: DatabaseCatalog;
let expected: DatabaseCatalog;

beforeAll(async () => {
  db = await createTestDatabase('schema_match');
  actual = await readCatalog(db.sql);
  const fromSchema = expectedCatalog(await loadDatamodel(SCHEMA_PATH));
  const indexes = fromSchema.indexes.map((index) => ({
    ...index,
    included: INCLUDED_NOT_IN_SCHEMA[index.name] ?? index.included,
  }));
  expected = sortCatalog({ ...fromSchema, indexes: [...indexes, ...NOT_IN_SCHEMA] });
});

afterAll(async () => {
  await db?.drop();
});

describe('a database migrated from prisma/migrations matches schema.prisma', () => {
  it('has the enums, with their values in order', () => {
    expect(actual.enums).toEqual(expected.enums);
  });

  it('has exactly the tables of the models', () => {
    expect(expected.tables.length).toBeGreaterThan(0);
    expect(actual.tables).toEqual(expected.tables);
  });

  it('has every column with its type, precision, nullability and default', () => {
    expect(actual.columns).toEqual(expected.columns);
  });

  it('has every index and unique constraint under its Prisma name', () => {
    expect(actual.indexes).toEqual(expected.indexes);
  });

  it('has every foreign key with its referential actions', () => {
    expect(actual.foreignKeys).toEqual(expected.foreignKeys);
  });
});
