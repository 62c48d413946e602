// Names for the statements each pooled connection keeps prepared (the driver adapter's statementNameGenerator):
// a statement's text is parsed once on a connection rather than at every call. Postgres spent more on parsing
// and binding slotfeed's statements than on running them (a CalDAV push's four: 0.3–0.5 ms each to parse and
// bind, 0.15–0.3 ms to run); prepared, its CPU a push halved (docs/performance.md).
//
// A name is a digest of its text, so one name never stands for two texts (node-postgres refuses that). A text is
// named at its second call, so that one run once (a snapshot's id written into it) is never kept, and at most
// `limit` texts are named in a pool, first come: a connection keeps what it prepared until it closes, and texts
// that vary (a list's length written into them) would otherwise grow that without end. A statement not named is
// parsed at each call, as before. Postgres plans a prepared statement for its parameters at first and may keep
// one generic plan after five calls; a report's range-dependent statements ask for a plan of their own every
// time (store/report-queries/report-session.ts).
import { createHash } from 'node:crypto';

/** DATABASE_PREPARED_STATEMENTS's default: several times the distinct statements slotfeed's roles run. */
export const DEFAULT_PREPARED_STATEMENTS = 200;

/**
 * Statements with more parameters than this stay unnamed: a list written out a parameter an element (a bulk
 * `createMany`, an `in` of many) is a text for each length, each prepared apart and kept, where parsing it is little
 * beside writing its rows.
 */
export const MOST_PARAMETERS_NAMED = 64;

/** A statement's name; '' leaves it unnamed (node-postgres parses an unnamed statement at each call). */
export type StatementNames = (query: { sql: string; args: readonly unknown[] }) => string;

/** Names for up to `limit` statement texts, each from its second call; undefined (every statement unnamed) for 0. */
export function statementNames(limit: number): StatementNames | undefined {
  if (limit <= 0) return undefined;
  const names = new Map<string, string>();
  // Texts seen once, bounded as the names are: past the bound it starts again, and a text is named a call later.
  let seenOnce = new Set<string>();
  return ({ sql, args }) => {
    if (args.length > MOST_PARAMETERS_NAMED) return '';
    const known = names.get(sql);
    if (known !== undefined) return known;
    if (names.size >= limit) return '';
    if (!seenOnce.has(sql)) {
      if (seenOnce.size >= limit) seenOnce = new Set();
      seenOnce.add(sql);
      return '';
    }
    seenOnce.delete(sql);
    const name = `sf_${createHash('sha256').update(sql).digest('base64url').slice(0, 22)}`;
    names.set(sql, name);
    return name;
  };
}
