// What a failed migration script is reported as: a short summary for the operator (error, SQLSTATE, the line
// of the script) and the `logs` text stored in _prisma_migrations, in the shape of Prisma's P3018 message.
import { coerceError } from '../../lib/coerce-error.js';
import type { LocalMigration } from './local-migrations.js';

interface PgErrorFields {
  code?: unknown;
  position?: unknown;
  detail?: unknown;
  hint?: unknown;
}

export interface ScriptFailure {
  summary: string;
  logs: string;
}

/** Statements that Postgres refuses inside any transaction block (SQLSTATE 25001). */
const NO_TRANSACTION_HINT =
  'This statement cannot run inside a transaction, and slotfeed applies each migration in one: apply it by ' +
  'hand and record the migration with `prisma migrate resolve --applied <name>`.';

function lineAt(script: string, position: number): { number: number; text: string } {
  const before = script.slice(0, Math.max(0, position - 1));
  const number = before.split('\n').length;
  return { number, text: script.split('\n')[number - 1]?.trim() ?? '' };
}

export function describeScriptFailure(migration: LocalMigration, thrown: unknown): ScriptFailure {
  const error = coerceError(thrown);
  const fields = thrown as PgErrorFields;
  const code = typeof fields.code === 'string' ? fields.code : 'none';
  const position = typeof fields.position === 'string' ? Number(fields.position) : NaN;
  const at = Number.isFinite(position) ? lineAt(migration.script, position) : undefined;

  const parts = [`${error.message} (SQLSTATE ${code})`];
  if (at) parts.push(`at line ${at.number} of migration.sql: ${at.text}`);
  if (typeof fields.detail === 'string') parts.push(`detail: ${fields.detail}`);
  if (typeof fields.hint === 'string') parts.push(`hint: ${fields.hint}`);
  if (code === '25001') parts.push(NO_TRANSACTION_HINT);
  const summary = parts.join('\n');

  const logs =
    `A migration failed to apply. New migrations cannot be applied before the error is recovered from. ` +
    `Read more about how to resolve migration issues in a production database: https://pris.ly/d/migrate-resolve\n\n` +
    `Migration name: ${migration.name}\n\nDatabase error code: ${code}\n\nDatabase error:\n${summary}\n\n` +
    `(applied by slotfeed in one transaction, which was rolled back: nothing of this migration remains)\n`;
  return { summary, logs };
}
