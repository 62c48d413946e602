// A report statement with its values written in as literals, for the one statement that cannot take bound
// parameters: COPY (…) TO STDOUT, which the streamed CSV export runs (csv-export.ts). Every value a
// report's SQL binds is cast where it is used (report-sql.ts: `::timestamptz`, `::date`, `::text`, `::uuid`), so a
// quoted literal, untyped as a bound parameter is, reads as the same value; test/reports/report-export.test.ts
// holds every exported CSV to the one formatted from the same report's rows.
import pg from 'pg';
import type { Prisma } from '../../generated/prisma/client.js';

/** A value as a literal: quoted and escaped (pg's escapeLiteral, as libpq's), never spliced as it is. */
function literalOf(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return pg.escapeLiteral(value);
  if (typeof value === 'number' && Number.isFinite(value)) return pg.escapeLiteral(String(value));
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new Error('a report statement binds an invalid Date');
    // The instant with its zone: Prisma sends the same one as a UTC wall time, read in UTC (prisma-client.ts).
    return pg.escapeLiteral(value.toISOString());
  }
  if (Array.isArray(value)) return pg.escapeLiteral(arrayText(value));
  throw new Error(`a report statement binds a value that cannot be written as a literal (${typeof value})`);
}

/** An array of strings as Postgres's array text, {"a","b"}: each element quoted, its quotes and backslashes escaped. */
function arrayText(values: unknown[]): string {
  const elements = values.map((element) => {
    if (typeof element !== 'string') {
      throw new Error('a report statement binds an array of something other than text');
    }
    return `"${element.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  });
  return `{${elements.join(',')}}`;
}

/**
 * `statement`'s text with each placeholder ($1, $2, …) replaced by its value as a literal. Report statements
 * hold no dollar signs of their own (no dollar quoting), so every `$n` is a placeholder; one past the values
 * is an error rather than text sent as it is.
 */
export function inlinedSql(statement: Prisma.Sql): string {
  const { values } = statement;
  // A value bound in many places is written once: an export's part binds its thousands of connection ids in each
  // of the statement's connection filters (export-parts.ts).
  const written = new Map<unknown, string>();
  return statement.text.replace(/\$(\d+)/g, (_placeholder, digits: string) => {
    const index = Number(digits) - 1;
    if (index < 0 || index >= values.length) {
      throw new Error(`a report statement names $${digits}, past its ${values.length} values`);
    }
    const value = values[index];
    let literal = written.get(value);
    if (literal === undefined) {
      literal = literalOf(value);
      written.set(value, literal);
    }
    return literal;
  });
}
