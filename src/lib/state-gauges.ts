// Gauges of the installation's state, read when Prometheus scrapes (not kept up to date between scrapes): how
// many connections are in each status, and how many jobs wait in each queue. Registered by the scheduler role
// only: every process would report the same numbers, and one reader of Postgres and Redis per scrape is enough.
// A reading that fails (Postgres or Redis away) leaves the gauge without a value for that scrape, which the
// alert rules treat as absent, and the failure shows in its own metrics and logs.
import { Gauge, type Registry } from 'prom-client';

export interface StateReaders {
  connectionsByStatus(): Promise<Record<string, number>>;
  /** Jobs per queue and state (waiting, delayed, active, failed). */
  queueJobs(): Promise<{ queue: string; state: string; count: number }[]>;
}

export const CONNECTION_STATUS_GAUGE = 'slotfeed_connections';
export const QUEUE_JOBS_GAUGE = 'slotfeed_queue_jobs';

export function registerStateGauges(registry: Registry, readers: StateReaders): void {
  new Gauge({
    name: CONNECTION_STATUS_GAUGE,
    help: 'Connections by status (active, needs_reauth, disabled), read at scrape time.',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      this.reset();
      try {
        for (const [status, count] of Object.entries(await readers.connectionsByStatus())) {
          this.set({ status }, count);
        }
      } catch {
        // No value this scrape.
      }
    },
  });
  new Gauge({
    name: QUEUE_JOBS_GAUGE,
    help: 'BullMQ jobs by queue and state (waiting, delayed, active, failed), read at scrape time.',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      this.reset();
      try {
        for (const { queue, state, count } of await readers.queueJobs()) this.set({ queue, state }, count);
      } catch {
        // No value this scrape.
      }
    },
  });
}
