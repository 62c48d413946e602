// The tests need a Postgres (TEST_DATABASE_ADMIN_URL) and a Redis (TEST_REDIS_URL). When both answer (CI, a
// developer's docker compose) this only checks. When one does not, it starts the demo's fallbacks, an embedded
// Postgres (throwaway, in a temporary directory) or a redis-server from PATH, and points the variable at it;
// jest's workers start after the global setup and inherit process.env. Loaded by global-setup.ts and
// global-teardown.ts, which run in jest's main process and share its globalThis.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres, type RunningPostgres } from '../../src/demo/embedded-postgres-server.js';
import { postgresAnswers } from '../../src/demo/local-postgres.js';
import { redisAnswers } from '../../src/demo/local-redis.js';
import {
  findExecutable,
  startRedisServer,
  type RunningRedisServer,
} from '../../src/demo/redis-server-process.js';
import { redactText } from '../../src/log.js';

const DEFAULT_DATABASE_ADMIN_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

interface StartedTestServices {
  postgres: RunningPostgres | null;
  redis: RunningRedisServer | null;
  /** Temporary directory of the embedded Postgres. */
  workDir: string | null;
  onSignal: ((signal: NodeJS.Signals) => void) | null;
}

// Setup and teardown may load this file as two module instances; globalThis is what they share.
const KEY = Symbol.for('slotfeed.testServices');
const shared = globalThis as Record<symbol, StartedTestServices | undefined>;

function note(text: string): void {
  process.stderr.write(`test setup: ${text}\n`);
}

/** Checks both services and starts a fallback for each one that does not answer; updates `env` to match. */
export async function startTestServices(env: Record<string, string | undefined>): Promise<void> {
  const started: StartedTestServices = { postgres: null, redis: null, workDir: null, onSignal: null };
  // Recorded first, so a failure half-way still lets the teardown stop what did start.
  shared[KEY] = started;

  const databaseUrl = env.TEST_DATABASE_ADMIN_URL || DEFAULT_DATABASE_ADMIN_URL;
  const redisUrl = env.TEST_REDIS_URL || DEFAULT_REDIS_URL;
  const [postgresUp, redisUp] = await Promise.all([postgresAnswers(databaseUrl), redisAnswers(redisUrl)]);

  if (!postgresUp) {
    started.workDir = await mkdtemp(path.join(os.tmpdir(), 'slotfeed-test-services-'));
    // Started by root, the server runs as the `postgres` user, which must be able to enter this directory.
    await chmod(started.workDir, 0o755);
    started.postgres = await startEmbeddedPostgres({
      dataDir: path.join(started.workDir, 'postgres'),
      password: randomBytes(12).toString('hex'),
      persistent: false,
    });
    env.TEST_DATABASE_ADMIN_URL = started.postgres.adminUrl;
    note(
      `no Postgres answers at ${redactText(databaseUrl)}; using an embedded one on 127.0.0.1:${started.postgres.port}`,
    );
  }

  if (!redisUp) {
    const executable = findExecutable('redis-server', env.PATH);
    if (executable === null) {
      throw new Error(
        `No Redis answers at ${redactText(redisUrl)} and there is no redis-server on PATH. Start one ` +
          '(docker compose up -d redis, or: sudo apt-get install redis-server), or set TEST_REDIS_URL.',
      );
    }
    started.redis = await startRedisServer({ executable });
    env.TEST_REDIS_URL = started.redis.url;
    note(`no Redis answers at ${redactText(redisUrl)}; started redis-server on ${started.redis.url}`);
  }

  if (started.postgres !== null || started.redis !== null) {
    // Interrupted (Ctrl-C), jest would die by the signal and skip the teardown; exiting instead runs the
    // servers' exit handlers, which ask them to stop.
    started.onSignal = (signal) => process.exit(signal === 'SIGINT' ? 130 : 143);
    process.once('SIGINT', started.onSignal);
    process.once('SIGTERM', started.onSignal);
  }
}

/** Stops what startTestServices started (nothing when both services already answered). */
export async function stopTestServices(): Promise<void> {
  const started = shared[KEY];
  if (started === undefined) return;
  shared[KEY] = undefined;
  if (started.onSignal !== null) {
    process.removeListener('SIGINT', started.onSignal);
    process.removeListener('SIGTERM', started.onSignal);
  }
  await started.redis?.stop();
  await started.postgres?.stop();
  if (started.workDir !== null) await rm(started.workDir, { recursive: true, force: true });
}
