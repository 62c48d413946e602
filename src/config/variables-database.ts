// Postgres: where it is, and how long a statement of the web role or the scheduler may run or wait.
import { z } from 'zod';
import { timeoutMs } from './value-schemas.js';
import { variable } from './variable.js';

const postgresUrl = z
  .string()
  .url()
  .refine((v) => /^postgres(ql)?:\/\//.test(v), 'must be a postgres:// or postgresql:// URL');

export const databaseVariables = {
  DATABASE_URL: variable({
    section: 'database',
    description: 'Postgres connection URL.',
    secret: true,
    schema: postgresUrl,
  }),
  DATABASE_STATEMENT_TIMEOUT_MS: variable({
    section: 'database',
    description:
      'Longest a statement of the web role or the scheduler may run before Postgres cancels it; 0 means no limit.',
    default: '10000',
    schema: timeoutMs,
  }),
  DATABASE_LOCK_TIMEOUT_MS: variable({
    section: 'database',
    description:
      'Longest such a statement waits for a lock, and a query for a free pooled connection; 0 means no limit.',
    default: '3000',
    schema: timeoutMs,
  }),
} as const;
