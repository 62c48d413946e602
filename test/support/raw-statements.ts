// A Prisma client whose raw statements ($queryRaw, $executeRaw), those of its interactive transactions too, go
// through `around`: for a test that watches what a store sends, or commits something of its own between two of its
// statements.
import type { PrismaClient } from '../../src/generated/prisma/client.js';

/** A raw statement as Prisma hands it over: its text and values, where it has them (Prisma.sql's form does). */
export interface RawStatement {
  sql?: string;
  values?: unknown[];
}

/**
 * `client`, each raw statement of it run by `around` (which calls `run` to send it, and returns what that returns:
 * returned as it is, Prisma's own promise stays one).
 */
export function throughStatements(
  client: object,
  around: (statement: RawStatement, run: () => unknown) => unknown,
): PrismaClient {
  return new Proxy(client, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (property === '$transaction')
        return (work: unknown, options?: unknown) =>
          typeof work === 'function'
            ? (value as (w: unknown, o?: unknown) => unknown).call(
                target,
                (tx: object) => (work as (t: unknown) => unknown)(throughStatements(tx, around)),
                options,
              )
            : (value as (w: unknown, o?: unknown) => unknown).call(target, work, options);
      if (property !== '$queryRaw' && property !== '$executeRaw') return value.bind(target);
      return (statement: RawStatement) =>
        around(statement, () => (value as (s: unknown) => unknown).call(target, statement));
    },
  }) as PrismaClient;
}
