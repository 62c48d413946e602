// A dedicated Postgres session, outside Prisma's pool, for the few readers that must own one: LISTEN delivers
// notices only to the session that listens (feed-change-listener.ts), and readiness must not queue behind a
// busy pool (postgres-probe.ts). The composition root (main.ts) decides where sessions go and hands out the
// factory; store/ only says what kind of session it wants.
import type pg from 'pg';

export interface PgSessionSettings {
  /** Shows in pg_stat_activity, so an operator can tell the sessions apart. */
  applicationName: string;
  connectTimeoutMs?: number;
  statementTimeoutMs?: number;
  keepAlive?: boolean;
}

/** Returns a new, not yet connected client; the caller connects it and ends it. */
export type PgSessions = (settings: PgSessionSettings) => pg.Client;
