// Each migration runs inside the runner's own transaction (see apply-pending-migrations.ts). A script that
// says BEGIN / COMMIT / ROLLBACK itself would end that transaction half-way: whatever ran before its COMMIT
// would stay even if a later statement failed. Prisma writes such scripts (e.g. when it recreates an enum), so
// they are refused up front with a message, before anything runs.
//
// Only top-level statements count: quoted strings, quoted identifiers, comments and dollar-quoted bodies (where
// PL/pgSQL's BEGIN ... END live) are skipped. Known blind spot: a SQL-standard function body
// (`BEGIN ATOMIC ... END`) is split at its inner semicolons and refused; write such bodies dollar-quoted.

export interface TransactionControlStatement {
  /** The statement's leading keywords, e.g. "COMMIT" or "START TRANSACTION". */
  keyword: string;
  /** 1-based line of the script where the statement starts. */
  line: number;
}

/** Top-level statements of `script`, with quoted text and comments blanked out; each with its start line. */
function topLevelStatements(script: string): { text: string; line: number }[] {
  const statements: { text: string; line: number }[] = [];
  let current = '';
  let line = 1;
  let startLine = 1;
  let i = 0;
  const skipTo = (end: number) => {
    for (let k = i; k < end && k < script.length; k++) if (script[k] === '\n') line++;
    current += ' ';
    i = end;
  };
  while (i < script.length) {
    const ch = script[i];
    const next = script[i + 1];
    if (current.trim() === '') startLine = line;
    if (ch === '-' && next === '-') {
      const end = script.indexOf('\n', i);
      skipTo(end === -1 ? script.length : end);
    } else if (ch === '/' && next === '*') {
      // Postgres block comments nest.
      let depth = 0;
      let k = i;
      do {
        if (script.startsWith('/*', k)) {
          depth++;
          k += 2;
        } else if (script.startsWith('*/', k)) {
          depth--;
          k += 2;
        } else {
          k++;
        }
      } while (depth > 0 && k < script.length);
      skipTo(k);
    } else if (ch === "'" || ch === '"') {
      // E'...' strings may escape the quote with a backslash; elsewhere a quote is escaped by doubling it.
      const backslashEscapes = ch === "'" && /[eE]$/.test(current);
      let k = i + 1;
      while (k < script.length) {
        if (backslashEscapes && script[k] === '\\') k += 2;
        else if (script[k] === ch && script[k + 1] === ch) k += 2;
        else if (script[k] === ch) break;
        else k++;
      }
      skipTo(k + 1);
    } else if (ch === '$' && /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.test(script.slice(i, i + 64))) {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(script.slice(i, i + 64))?.[0] ?? '$$';
      const end = script.indexOf(tag, i + tag.length);
      skipTo(end === -1 ? script.length : end + tag.length);
    } else if (ch === ';') {
      statements.push({ text: current, line: startLine });
      current = '';
      i++;
    } else {
      if (ch === '\n') line++;
      current += ch;
      i++;
    }
  }
  statements.push({ text: current, line: startLine });
  return statements.filter((s) => s.text.trim() !== '');
}

const TRANSACTION_CONTROL =
  /^\s*(BEGIN|START\s+TRANSACTION|COMMIT|END|ABORT|ROLLBACK(?!\s+(?:WORK\s+|TRANSACTION\s+)?TO\b)|PREPARE\s+TRANSACTION)\b/i;

/** The first top-level statement that starts, ends or aborts a transaction, if any. */
export function findTransactionControl(script: string): TransactionControlStatement | undefined {
  for (const statement of topLevelStatements(script)) {
    const match = TRANSACTION_CONTROL.exec(statement.text);
    if (match?.[1]) return { keyword: match[1].toUpperCase().replace(/\s+/g, ' '), line: statement.line };
  }
  return undefined;
}
