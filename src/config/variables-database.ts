// Postgres: where it is, and how long a statement of the web role or the scheduler may run or wait.
import { z } from 'zod';
import { DEFAULT_PREPARED_STATEMENTS } from '../lib/prepared-statements.js';
import { timeoutMs } from './value-schemas.js';
import { section, variable } from './variable.js';

const postgresUrl = z
  .string()
  .url()
  .refine((v) => /^postgres(ql)?:\/\//.test(v), 'must be a postgres:// or postgresql:// URL');

export const databaseSection = section({
  variables: {
    url: variable({
      name: 'DATABASE_URL',
      description: 'Postgres connection URL.',
      secret: true,
      schema: postgresUrl,
    }),
    statementTimeoutMs: variable({
      name: 'DATABASE_STATEMENT_TIMEOUT_MS',
      description:
        'Longest a statement of the web role or the scheduler may run before Postgres cancels it; 0 means no limit.',
      default: '10000',
      schema: timeoutMs,
    }),
    lockTimeoutMs: variable({
      name: 'DATABASE_LOCK_TIMEOUT_MS',
      description:
        'Longest such a statement waits for a lock, and a query for a free pooled connection; 0 means no limit.',
      default: '3000',
      schema: timeoutMs,
    }),
    preparedStatements: variable({
      name: 'DATABASE_PREPARED_STATEMENTS',
      description:
        'How many statement texts each pool keeps prepared on its connections (parsed once, not at every call); 0: none, for a PgBouncer in transaction mode before 1.21.',
      default: String(DEFAULT_PREPARED_STATEMENTS),
      schema: z.coerce.number().int().min(0).max(10_000),
    }),
  },
});
