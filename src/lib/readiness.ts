// Readiness per role: each role is ready when what it needs for its own work answers, and only that. One
// /readyz for every role made a web replica that serves feeds perfectly well (they need Postgres only) look
// unready while Redis was down, and a load balancer dropped it; and a worker whose Postgres had turned
// read-only looked ready while every sync failed.
//   feeds      Postgres answers, or this process can serve feeds from memory (see web/health-routes.ts)
//   web        Postgres and Redis: the connect flow, admin sessions and actions, the queue dashboard
//   worker     Postgres takes writes (a sync commits), and Redis answers (jobs, locks, the rate limit)
//   scheduler  Postgres answers (it reads who is due), Redis answers (it enqueues), and a next tick is in Redis:
//              the tick's job scheduler and the job it fires next (without them no tick fires; the scheduler's
//              watchdog puts them back)
// Every probe has its own short timeout, so a dependency that hangs makes a probe say "timeout", not hang.
import type { RedisClient } from './redis-connection.js';

export const PROBE_TIMEOUT_MS = 2000;

/** What readiness asks the database; the composition root passes store/postgres-probe.ts's probe. */
export interface DatabaseProbe {
  /** Resolves when the database answers within timeoutMs; rejects otherwise. */
  check(timeoutMs: number): Promise<void>;
  /** Resolves when a new session could write; rejects with a ReadOnlyDatabaseError when it could not. */
  checkWritable(timeoutMs: number): Promise<void>;
}

/** The database answered, but its sessions cannot write (a read-only database or role, or a standby). */
export class ReadOnlyDatabaseError extends Error {}

export type CheckResult = 'ok' | 'failed' | 'timeout' | 'read_only' | 'missing';

export interface Verdict {
  ready: boolean;
  /** What was asked, and what it answered: the body of the readiness response. */
  checks: Record<string, string>;
}

export type ReadinessCheck = () => Promise<Verdict>;

/** The readiness endpoints a process offers: /readyz/<name> for each; /readyz combines the `primary` ones. */
export interface ProcessReadiness {
  checks: Record<string, ReadinessCheck>;
  primary: string[];
}

export async function probeWithin(
  check: () => Promise<unknown>,
  timeoutMs: number = PROBE_TIMEOUT_MS,
): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const running = check().then(() => 'ok' as const);
  running.catch(() => undefined);
  try {
    return await Promise.race([running, timeout]);
  } catch (thrown: unknown) {
    return thrown instanceof ReadOnlyDatabaseError ? 'read_only' : 'failed';
  } finally {
    clearTimeout(timer);
  }
}

export function postgresAnswers(probe: DatabaseProbe): Promise<CheckResult> {
  return probeWithin(() => probe.check(PROBE_TIMEOUT_MS));
}

export function postgresTakesWrites(probe: DatabaseProbe): Promise<CheckResult> {
  return probeWithin(() => probe.checkWritable(PROBE_TIMEOUT_MS));
}

/** A connection that is not up fails at once; a PING queued behind a reconnect would only time out. */
export function redisAnswers(redis: RedisClient): Promise<CheckResult> {
  if (redis.status !== 'ready') return Promise.resolve('failed');
  return probeWithin(() => redis.ping());
}

function verdictOf(checks: Record<string, CheckResult>): Verdict {
  return { ready: Object.values(checks).every((result) => result === 'ok'), checks };
}

export function workerReadiness(probe: DatabaseProbe, redis: RedisClient): ReadinessCheck {
  return async () => {
    const [postgres, redisResult] = await Promise.all([postgresTakesWrites(probe), redisAnswers(redis)]);
    return verdictOf({ postgres, redis: redisResult });
  };
}

/** 'missing' when Redis answers but holds no next tick (its keys were deleted): no tick can fire. */
export async function tickScheduled(isScheduled: () => Promise<boolean>): Promise<CheckResult> {
  let scheduled = false;
  const result = await probeWithin(async () => {
    scheduled = await isScheduled();
  });
  return result === 'ok' && !scheduled ? 'missing' : result;
}

export function schedulerReadiness(
  probe: DatabaseProbe,
  redis: RedisClient,
  isTickScheduled: () => Promise<boolean>,
): ReadinessCheck {
  return async () => {
    const [postgres, redisResult, tick] = await Promise.all([
      postgresAnswers(probe),
      redisAnswers(redis),
      tickScheduled(isTickScheduled),
    ]);
    return verdictOf({ postgres, redis: redisResult, tick });
  };
}

/** Several roles' verdicts as one: ready when all are; the checks of each, and each role's own verdict. */
export async function combinedVerdict(
  checks: Record<string, ReadinessCheck>,
  names: readonly string[],
): Promise<Verdict & { roles: Record<string, 'ready' | 'not ready'> }> {
  const verdicts = await Promise.all(names.map(async (name) => [name, await checks[name]!()] as const));
  const merged: Record<string, string> = {};
  const roles: Record<string, 'ready' | 'not ready'> = {};
  for (const [name, verdict] of verdicts) {
    roles[name] = verdict.ready ? 'ready' : 'not ready';
    for (const [check, result] of Object.entries(verdict.checks)) {
      // Two roles may ask the same store different questions (answers, takes writes): keep the worse one.
      merged[check] = merged[check] === undefined || merged[check] === 'ok' ? result : merged[check];
    }
  }
  return { ready: verdicts.every(([, verdict]) => verdict.ready), checks: merged, roles };
}
