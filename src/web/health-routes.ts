// Liveness, readiness and metrics. /healthz says only that the process answers: it touches no store, so
// neither a locked table nor an exhausted pool can hold it up. Readiness is per role (lib/readiness.ts):
// /readyz/<name> for each role this process runs, and /readyz for all of them, the web role counted by its
// feeds. A load balancer in front of feeds asks /readyz/feeds; /readyz/web also needs Redis, for the connect
// flow and admin. Each probe has a short timeout, so a store that hangs cannot hang the probe.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { RedisClient } from '../lib/redis-connection.js';
import type { Metrics } from '../lib/metrics.js';
import {
  combinedVerdict,
  postgresAnswers,
  redisAnswers,
  type DatabaseProbe,
  type ProcessReadiness,
  type ReadinessCheck,
  type Verdict,
} from '../lib/readiness.js';

export interface HealthDeps {
  readiness: ProcessReadiness;
  metrics: Metrics;
}

/**
 * The web role's two readiness checks. Feeds need Postgres, or, while it cannot answer, feeds this process
 * can still serve from memory (serving/last-good-feeds.ts): such a replica answers most polls during an outage,
 * and one that would answer nothing but 503 is better left out. Redis is not asked: feeds never use it.
 */
export function webReadiness(deps: {
  postgresProbe: DatabaseProbe;
  redis: RedisClient;
  canServeFeedsFromMemory: () => boolean;
}): { feeds: ReadinessCheck; web: ReadinessCheck } {
  return {
    async feeds(): Promise<Verdict> {
      const postgres = await postgresAnswers(deps.postgresProbe);
      if (postgres === 'ok') return { ready: true, checks: { postgres } };
      const fromMemory = deps.canServeFeedsFromMemory();
      return { ready: fromMemory, checks: { postgres, lastGoodFeeds: fromMemory ? 'serving' : 'none' } };
    },
    async web() {
      const [postgres, redis] = await Promise.all([
        postgresAnswers(deps.postgresProbe),
        redisAnswers(deps.redis),
      ]);
      return { ready: postgres === 'ok' && redis === 'ok', checks: { postgres, redis } };
    },
  };
}

function answer(reply: FastifyReply, ready: boolean, body: Record<string, unknown>): FastifyReply {
  return reply
    .code(ready ? 200 : 503)
    .header('cache-control', 'no-store')
    .send({ status: ready ? 'ready' : 'not ready', ...body });
}

export function registerHealthRoutes(app: FastifyInstance, deps: HealthDeps): void {
  const { checks, primary } = deps.readiness;

  app.get('/healthz', async (_request, reply) =>
    reply.header('cache-control', 'no-store').send({ status: 'ok' }),
  );

  app.get('/readyz', async (_request, reply) => {
    const verdict = await combinedVerdict(checks, primary);
    return answer(reply, verdict.ready, { roles: verdict.roles, ...verdict.checks });
  });

  for (const [name, check] of Object.entries(checks)) {
    app.get(`/readyz/${name}`, async (_request, reply) => {
      const verdict = await check();
      return answer(reply, verdict.ready, verdict.checks);
    });
  }

  app.get('/metrics', async (_request, reply) => {
    const text = await deps.metrics.registry.metrics();
    return reply.type(deps.metrics.registry.contentType).header('cache-control', 'no-store').send(text);
  });
}
