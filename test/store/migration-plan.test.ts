// The runner's pure rules, without a database: checksums as Prisma computes them, how local folders and
// history rows combine, and which scripts would break the one-transaction-per-migration guarantee.
import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { migrationChecksum, scriptMatchesChecksum } from '../../src/store/migrations/checksum.js';
import type { LocalMigration } from '../../src/store/migrations/local-migrations.js';
import { MigrationError } from '../../src/store/migrations/migration-error.js';
import { assertHistoryAllowsApplying, planMigrations } from '../../src/store/migrations/migration-plan.js';
import type { MigrationRow } from '../../src/store/migrations/migrations-table.js';
import { findTransactionControl } from '../../src/store/migrations/transaction-control.js';

const T0 = new Date('2026-03-02T09:00:00Z');

function local(name: string, script = `-- ${name}\nSELECT 1;\n`): LocalMigration {
  return { name, script, checksum: migrationChecksum(script) };
}

function row(migration: LocalMigration, overrides: Partial<MigrationRow> = {}): MigrationRow {
  return {
    id: `id-${migration.name}`,
    checksum: migration.checksum,
    migrationName: migration.name,
    startedAt: T0,
    finishedAt: T0,
    rolledBackAt: null,
    logs: null,
    appliedStepsCount: 1,
    ...overrides,
  };
}

function thrownBy(fn: () => void): MigrationError {
  try {
    fn();
  } catch (thrown: unknown) {
    if (thrown instanceof MigrationError) return thrown;
    throw thrown;
  }
  throw new Error('expected a MigrationError');
}

describe('checksums', () => {
  it("is Prisma's: SHA-256 of the UTF-8 text as 64 hex digits (prisma-engines' own test vector)", () => {
    expect(migrationChecksum('hello')).toBe(
      '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
    );
    const script = 'CREATE TABLE "é" ("x" TEXT);\n';
    expect(migrationChecksum(script)).toBe(
      createHash('sha256').update(Buffer.from(script, 'utf8')).digest('hex'),
    );
  });

  it('matches across LF and CRLF checkouts, as Prisma does', () => {
    const lf = 'CREATE TABLE a (x int);\nCREATE TABLE b (y int);\n';
    const crlf = lf.replaceAll('\n', '\r\n');
    expect(scriptMatchesChecksum(crlf, migrationChecksum(lf))).toBe(true);
    expect(scriptMatchesChecksum(lf, migrationChecksum(crlf))).toBe(true);
  });

  it('does not match an edited script', () => {
    expect(scriptMatchesChecksum('abc\n', migrationChecksum('abc'))).toBe(false);
    expect(scriptMatchesChecksum('abc', migrationChecksum('abcd'))).toBe(false);
  });

  it('accepts the unpadded checksums old Prisma versions wrote (prisma-engines#1887)', () => {
    const digest = createHash('sha256').update('SELECT 1;').digest();
    const unpadded = [...digest].map((byte) => byte.toString(16)).join('');
    expect(unpadded.length).toBeLessThan(64); // this script's digest has bytes below 0x10
    expect(scriptMatchesChecksum('SELECT 1;', unpadded)).toBe(true);
  });
});

describe('planMigrations', () => {
  const a = local('20260101000000_a');
  const b = local('20260102000000_b');
  const c = local('20260103000000_c');

  it('lists finished migrations as applied and the rest as pending, in folder order', () => {
    const plan = planMigrations([a, b, c], [row(a)]);
    expect(plan.alreadyApplied).toEqual([a.name]);
    expect(plan.pending.map((m) => m.name)).toEqual([b.name, c.name]);
    expect(plan).toMatchObject({ modified: [], missingLocally: [], failed: [] });
  });

  it('treats a rolled-back attempt as never applied, and a failed one as blocking', () => {
    const rolledBack = row(b, { finishedAt: null, rolledBackAt: T0, appliedStepsCount: 0 });
    expect(planMigrations([a, b], [row(a), rolledBack]).pending.map((m) => m.name)).toEqual([b.name]);

    const failed = row(b, { finishedAt: null, logs: 'boom', appliedStepsCount: 0 });
    const plan = planMigrations([a, b], [row(a), failed]);
    expect(plan.pending).toEqual([]);
    expect(plan.failed.map((r) => r.migrationName)).toEqual([b.name]);
  });

  it('flags an edited migration and one the database has but the folder lacks', () => {
    const edited = { ...b, script: b.script + '-- edited\n' };
    expect(planMigrations([a, edited], [row(a), row(b)]).modified).toEqual([b.name]);
    expect(planMigrations([a], [row(a), row(b)]).missingLocally).toEqual([b.name]);
  });

  it('refuses failed attempts first, then missing folders, then edits, naming the migrations', () => {
    const failed = row(c, {
      finishedAt: null,
      logs: 'ERROR: relation "x" does not exist',
      appliedStepsCount: 0,
    });
    const everything = planMigrations([{ ...a, script: 'changed' }, c], [row(a), row(b), failed]);
    const first = thrownBy(() => assertHistoryAllowsApplying(everything, '/m'));
    expect(first.code).toBe('failed_migration');
    expect(first.message).toContain(c.name);
    expect(first.message).toContain('relation "x" does not exist');
    expect(first.message).toContain('P3009');

    const missing = thrownBy(() =>
      assertHistoryAllowsApplying(planMigrations([{ ...a, script: 'changed' }], [row(a), row(b)]), '/m'),
    );
    expect(missing).toMatchObject({ code: 'missing_locally', migrations: [b.name] });

    const edited = thrownBy(() =>
      assertHistoryAllowsApplying(planMigrations([{ ...a, script: 'x' }], [row(a)]), '/m'),
    );
    expect(edited).toMatchObject({ code: 'checksum_mismatch', migrations: [a.name] });
    expect(edited.message).toContain(a.name);
  });
});

describe('findTransactionControl', () => {
  it('finds top-level BEGIN / COMMIT / ROLLBACK with their line', () => {
    expect(
      findTransactionControl('CREATE TABLE a (x int);\nBEGIN;\nCREATE TABLE b (y int);\nCOMMIT;\n'),
    ).toEqual({
      keyword: 'BEGIN',
      line: 2,
    });
    expect(findTransactionControl('SELECT 1;\n  commit ;')).toEqual({ keyword: 'COMMIT', line: 2 });
    expect(findTransactionControl('START TRANSACTION;')).toMatchObject({ keyword: 'START TRANSACTION' });
    expect(findTransactionControl('SELECT 1; ROLLBACK')).toMatchObject({ keyword: 'ROLLBACK' });
  });

  it('ignores the words inside function bodies, strings, identifiers and comments', () => {
    const script = [
      '-- BEGIN; a comment',
      '/* COMMIT; /* nested */ still comment; */',
      'CREATE FUNCTION f() RETURNS trigger AS $body$',
      'BEGIN',
      '  NEW.x := 1; RETURN NEW;',
      'END;',
      '$body$ LANGUAGE plpgsql;',
      "INSERT INTO t VALUES ('COMMIT;', E'it\\'s; BEGIN');",
      'CREATE TABLE "begin" ("commit" int);',
      'SAVEPOINT s; ROLLBACK TO SAVEPOINT s; RELEASE SAVEPOINT s;',
      '',
    ].join('\n');
    expect(findTransactionControl(script)).toBeUndefined();
  });
});
