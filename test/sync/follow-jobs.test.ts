// followJobs against real Redis and a real BullMQ worker: ends learned from the event stream, a job that ended
// before following began (the subscription race), a final failure with its reason, and the timeout.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { RedisClient } from '../../src/lib/redis-connection.js';
import { createRedisConnection } from '../../src/lib/redis-connection.js';
import { followJobs } from '../../src/sync/follow-jobs.js';
import { createTestRedis, type TestRedis } from '../support/redis.js';
import { waitFor } from '../support/wait-for.js';

let redis: TestRedis;
let queue: Queue;
let workerConnection: RedisClient | undefined;
let worker: Worker | undefined;

beforeAll(async () => {
  redis = await createTestRedis('follow-jobs');
  queue = new Queue('follow', { connection: redis.connection, prefix: redis.prefix });
});
afterEach(async () => {
  await worker?.close();
  workerConnection?.disconnect();
  worker = undefined;
  workerConnection = undefined;
});
afterAll(async () => {
  await queue.close();
  await redis.cleanup();
});

function startWorker(processor: (job: Job) => Promise<unknown>): Worker {
  workerConnection = createRedisConnection(redis.url, 'blocking', 'follow-jobs-test-worker');
  worker = new Worker('follow', processor, { connection: workerConnection, prefix: redis.prefix });
  worker.on('error', () => undefined);
  return worker;
}

function capture(isTTY = false) {
  let text = '';
  return { out: { write: (t: string) => void (text += t), isTTY }, text: () => text };
}

describe('followJobs', () => {
  it('reports completions and final failures as the worker reaches them', async () => {
    const jobs = await queue.addBulk([
      { name: 'ok', data: {} },
      { name: 'bad', data: {}, opts: { attempts: 2, backoff: { type: 'fixed', delay: 10 } } },
    ]);
    startWorker(async (job) => {
      if (job.name === 'bad') throw new Error('upstream said no');
      return 'done';
    });
    const { out, text } = capture(true);

    const outcome = await followJobs(queue, jobs, { timeoutMs: 20_000, redis: { url: redis.url }, out });

    expect(outcome).toEqual({
      completed: 1,
      failed: 1,
      unfinished: 0,
      failures: [{ jobId: jobs[1]!.id, reason: 'upstream said no' }],
    });
    expect(text()).toMatch(
      /\r\[#+\] 2\/2 finished, 1 failed\n1 completed, 1 failed\n {2}job \S+: upstream said no\n$/,
    );
  });

  it('counts jobs that ended before following began', async () => {
    startWorker(async (job) => {
      if (job.name === 'bad') throw new UnrecoverableError('gone');
      return 'done';
    });
    const jobs = await queue.addBulk([
      { name: 'ok', data: {} },
      { name: 'bad', data: {} },
    ]);
    await waitFor(
      () => Promise.all(jobs.map((job) => queue.getJobState(job.id!))),
      (states) => states.every((state) => state === 'completed' || state === 'failed'),
      { what: 'both jobs to end' },
    );
    const { out, text } = capture();

    // No event of theirs comes after following begins: only the state check can see them.
    const outcome = await followJobs(queue, jobs, { timeoutMs: 5_000, redis: { url: redis.url }, out });

    expect(outcome).toMatchObject({ completed: 1, failed: 1, unfinished: 0 });
    expect(text()).toBe(`1 completed, 1 failed\n  job ${jobs[1]!.id}: gone\n`);
  });

  it('gives up at the timeout and counts what is still running', async () => {
    const jobs = [await queue.add('nobody-takes-this', {})];
    const { out, text } = capture();

    const outcome = await followJobs(queue, jobs, { timeoutMs: 300, redis: { url: redis.url }, out });

    expect(outcome).toMatchObject({ completed: 0, failed: 0, unfinished: 1 });
    expect(text()).toBe('0 completed, 0 failed, 1 still running (timed out waiting)\n');
  });
});
