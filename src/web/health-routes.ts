// Liveness, readiness and metrics. /healthz says only that the process answers: it touches no store, so
// neither a locked table nor an exhausted pool can hold it up. /readyz asks Postgres (over a connection of
// its own, not the pool: see postgres-probe.ts) and Redis, each with a short timeout, so a load balancer stops
// sending traffic to a process whose stores are gone without the probe itself hanging.
import type { FastifyInstance } from 'fastify';
import type { WebDeps } from './web-deps.js';

const PROBE_TIMEOUT_MS = 2000;

async function probe(check: () => Promise<unknown>, timeoutMs: number): Promise<'ok' | 'failed' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  try {
    return await Promise.race([check().then(() => 'ok' as const), timeout]);
  } catch {
    return 'failed';
  } finally {
    clearTimeout(timer);
  }
}

export function registerHealthRoutes(app: FastifyInstance, deps: WebDeps): void {
  app.get('/healthz', async (_request, reply) =>
    reply.header('cache-control', 'no-store').send({ status: 'ok' }),
  );

  app.get('/readyz', async (_request, reply) => {
    const [postgres, redis] = await Promise.all([
      probe(() => deps.postgresProbe.check(PROBE_TIMEOUT_MS), PROBE_TIMEOUT_MS),
      probe(() => deps.redis.ping(), PROBE_TIMEOUT_MS),
    ]);
    const ready = postgres === 'ok' && redis === 'ok';
    return reply
      .code(ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ status: ready ? 'ready' : 'not ready', postgres, redis });
  });

  app.get('/metrics', async (_request, reply) => {
    const text = await deps.metrics.registry.metrics();
    return reply.type(deps.metrics.registry.contentType).header('cache-control', 'no-store').send(text);
  });
}
