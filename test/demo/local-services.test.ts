// The demo's (and the test setup's) choice of Postgres and Redis: a URL from the environment is used as given;
// otherwise the default Redis when it answers, else a redis-server from PATH, else a message that says how to
// get one; for Postgres an embedded server whose data survives a restart.
import { chmod, mkdtemp, mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { freeLoopbackPort } from '../../src/demo/free-port.js';
import { postgresAnswers, resolveLocalPostgres } from '../../src/demo/local-postgres.js';
import { redisAnswers, RedisUnavailableError, resolveLocalRedis } from '../../src/demo/local-redis.js';
import { findExecutable } from '../../src/demo/redis-server-process.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase, MIGRATIONS_DIR, TEST_DATABASE_ADMIN_URL } from '../support/db.js';
import { TEST_REDIS_URL } from '../support/redis.js';
import { isAlive, processGroupOf } from '../support/processes.js';
import { patient } from '../support/patience.js';

const logger = createLogger({ level: 'silent' });
let workDir: string;
/** redis:// and postgresql:// URLs where nothing listens. */
let deadRedisUrl: string;
let deadPostgresUrl: string;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'slotfeed-local-services-'));
  // Run as root, the embedded server runs as the `postgres` user, which must be able to enter this directory.
  await chmod(workDir, 0o755);
  deadRedisUrl = `redis://127.0.0.1:${await freeLoopbackPort()}`;
  deadPostgresUrl = `postgresql://postgres@127.0.0.1:${await freeLoopbackPort()}/postgres`;
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

describe('probes', () => {
  it('tell a service that answers from a port where nothing listens', async () => {
    expect(await redisAnswers(TEST_REDIS_URL)).toBe(true);
    expect(await redisAnswers(deadRedisUrl)).toBe(false);
    expect(await postgresAnswers(TEST_DATABASE_ADMIN_URL)).toBe(true);
    expect(await postgresAnswers(deadPostgresUrl)).toBe(false);
  });
});

describe('resolveLocalRedis', () => {
  it('uses REDIS_URL when it is set, and starts nothing', async () => {
    const redis = await resolveLocalRedis({
      env: { REDIS_URL: TEST_REDIS_URL },
      defaultUrl: deadRedisUrl,
      logger,
    });
    expect(redis).toMatchObject({ url: TEST_REDIS_URL, source: 'env', server: null });
  });

  it('stops with a clear error when REDIS_URL does not answer, rather than trying anything else', async () => {
    const attempt = resolveLocalRedis({
      env: { REDIS_URL: deadRedisUrl },
      defaultUrl: TEST_REDIS_URL,
      logger,
    });
    await expect(attempt).rejects.toThrow(RedisUnavailableError);
    await expect(attempt).rejects.toThrow('does not answer');
  });

  it('uses the default Redis when REDIS_URL is unset and it answers', async () => {
    const redis = await resolveLocalRedis({ env: {}, defaultUrl: TEST_REDIS_URL, logger });
    expect(redis).toMatchObject({ url: TEST_REDIS_URL, source: 'default', server: null });
  });

  it('says exactly how to get a Redis when none answers and redis-server is not on PATH', async () => {
    const emptyBin = path.join(workDir, 'empty-bin');
    await mkdir(emptyBin);
    const attempt = resolveLocalRedis({ env: {}, defaultUrl: deadRedisUrl, pathEnv: emptyBin, logger });
    await expect(attempt).rejects.toThrow(RedisUnavailableError);
    await expect(attempt).rejects.toThrow('docker compose up -d redis');
    await expect(attempt).rejects.toThrow('apt-get install redis-server');
  });

  const redisServer = findExecutable('redis-server', process.env.PATH);
  (redisServer ? it : it.skip)(
    'starts redis-server on a free loopback port without persistence, and stops it',
    async () => {
      const redis = await resolveLocalRedis({
        env: { PATH: process.env.PATH },
        defaultUrl: deadRedisUrl,
        logger,
      });
      try {
        expect(redis.source).toBe('started');
        expect(redis.url).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
        expect(redis.url).not.toBe(deadRedisUrl);
        expect(await redisAnswers(redis.url)).toBe(true);
        expect(isAlive(redis.server!.pid)).toBe(true);
        // Out of reach of a Ctrl-C meant for the demo, as the embedded Postgres below.
        expect(await processGroupOf(redis.server!.pid)).not.toBe(await processGroupOf(process.pid));
      } finally {
        await redis.stop();
      }
      expect(isAlive(redis.server!.pid)).toBe(false);
      expect(await redisAnswers(redis.url)).toBe(false);
    },
  );
});

describe('resolveLocalPostgres', () => {
  it('uses DATABASE_URL when it is set, and applies pending migrations to it', async () => {
    const db = await createTestDatabase('demo_env_pg', { migrate: false });
    try {
      const postgres = await resolveLocalPostgres({
        env: { DATABASE_URL: db.url },
        dataDir: path.join(workDir, 'unused'),
        password: 'unused-password',
        migrationsDir: MIGRATIONS_DIR,
        logger,
      });
      expect(postgres).toMatchObject({ url: db.url, source: 'env', server: null });
      const applied = await db.sql.query('SELECT count(*)::int AS n FROM _prisma_migrations');
      expect(applied.rows[0].n).toBeGreaterThan(0);
    } finally {
      await db.drop();
    }
  });

  it(
    'otherwise starts an embedded Postgres on a free port (not 5432) whose migrated data survives a restart',
    async () => {
      const input = {
        env: {},
        dataDir: path.join(workDir, 'postgres'),
        password: 'demo-test-password',
        migrationsDir: MIGRATIONS_DIR,
        logger,
      };
      const first = await resolveLocalPostgres(input);
      let pid = first.server!.pid;
      try {
        expect(first.source).toBe('embedded');
        expect(first.server!.port).not.toBe(5432);
        // Not in this process's group: a terminal's Ctrl-C (SIGINT to its foreground group) reaches the demo
        // alone, and the server runs until the demo, having closed what uses it, stops it.
        expect(await processGroupOf(pid)).not.toBe(await processGroupOf(process.pid));
        expect(first.url).toMatch(/^postgresql:\/\/postgres:[^@]+@127\.0\.0\.1:\d+\/slotfeed$/);
        const client = new pg.Client({ connectionString: first.url });
        await client.connect();
        await client.query(
          `INSERT INTO connection (id, upstream_user_id) VALUES (gen_random_uuid(), 'kept')`,
        );
        await client.end();
      } finally {
        await first.stop();
      }
      expect(isAlive(pid)).toBe(false);

      const second = await resolveLocalPostgres(input);
      pid = second.server!.pid;
      try {
        const client = new pg.Client({ connectionString: second.url });
        await client.connect();
        const kept = await client.query(`SELECT upstream_user_id FROM connection`);
        await client.end();
        expect(kept.rows).toEqual([{ upstream_user_id: 'kept' }]);
      } finally {
        await second.stop();
      }
      expect(isAlive(pid)).toBe(false);
    },
    patient(40_000),
  );
});
