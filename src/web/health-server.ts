// The worker and scheduler roles serve no HTTP of their own. Run without the web role (`slotfeed worker`,
// `slotfeed scheduler`) and given HEALTH_PORT, a process opens this small server so an orchestrator can ask
// whether it is ready (a worker whose Postgres turned read-only is not) and Prometheus can scrape its sync
// counters. A process that runs the web role serves the same routes on the web port instead.
import type { AddressInfo } from 'node:net';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import type { Metrics } from '../lib/metrics.js';
import type { ProcessReadiness } from '../lib/readiness.js';
import type { Logger } from '../log.js';
import { registerHealthRoutes } from './health-routes.js';

export interface HealthServerDeps {
  host: string;
  port: number;
  readiness: ProcessReadiness;
  metrics: Metrics;
  logger: Logger;
}

export async function startHealthServer(
  deps: HealthServerDeps,
): Promise<{ url: string; close(): Promise<void> }> {
  const app = Fastify({
    loggerInstance: deps.logger,
    // Probes come every few seconds: no line per request.
    logController: new LogController({ disableRequestLogging: true }),
  }) as unknown as FastifyInstance;
  registerHealthRoutes(app, { readiness: deps.readiness, metrics: deps.metrics });
  await app.listen({ host: deps.host, port: deps.port });
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return { url: `http://${host}:${address.port}`, close: () => (closing ??= app.close()) };
}
