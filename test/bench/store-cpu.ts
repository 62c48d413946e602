// The CPU Postgres and Redis spend on a measure (issue 43), read from /proc as process-stats.ts reads the bench's
// own: Postgres's as the sum over the backends serving the bench's database (their pids from pg_stat_activity;
// the shared server's other databases are other benches' and tests'), Redis's as a private redis-server's whole
// CPU, so nothing but the bench's own commands is in it. A backend that ends during a measure takes its CPU with
// it (Prisma keeps its pool open, so none does here), and one that starts counts from zero.
import type pg from 'pg';
import { cpuMsOf } from './process-stats.js';

export interface CpuReading {
  /** CPU ms of each process, by pid, at the reading. */
  byPid: Map<number, number>;
}

function readPids(pids: readonly number[]): CpuReading {
  const byPid = new Map<number, number>();
  for (const pid of pids) {
    try {
      byPid.set(pid, cpuMsOf(pid));
    } catch {
      // Ended since it was listed.
    }
  }
  return { byPid };
}

/** CPU ms spent between two readings, summed over the processes of the later one. */
export function cpuMsBetween(before: CpuReading, after: CpuReading): number {
  let sum = 0;
  for (const [pid, ms] of after.byPid) sum += ms - (before.byPid.get(pid) ?? 0);
  return sum;
}

/** The backends of `database` on the server `sql` talks to (Postgres on this machine). */
export async function readPostgresCpu(sql: pg.Pool, database: string): Promise<CpuReading> {
  const { rows } = await sql.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
    [database],
  );
  return readPids(rows.map((row) => row.pid));
}

export const readProcessCpu = (pid: number): CpuReading => readPids([pid]);
