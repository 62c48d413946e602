// `slotfeed sync --wait`: follows enqueued jobs to their end. On a terminal it redraws one progress line; in a
// pipe it stays quiet until the summary, so scripts get clean output.
// It learns of each job's end from the queue's event stream (BullMQ's QueueEvents) rather than by polling.
// QueueEvents blocks on XREAD, so it gets a connection of its own, made here and closed when following ends: one
// per shard of the sync queue that holds a followed job (REDIS_SHARDS).
import { QueueEvents, type Job, type Queue } from 'bullmq';
import type { RedisClient, RedisTarget } from '../lib/redis-connection.js';
import { createRedisConnection } from '../lib/redis-connection.js';
import { asShards, type QueueOrShards } from '../lib/queue-shards.js';

export interface FollowOutput {
  write(text: string): void;
  isTTY: boolean;
}

export interface FollowOutcome {
  completed: number;
  failed: number;
  unfinished: number;
  failures: { jobId: string; reason: string }[];
}

const BAR_WIDTH = 30;

function progressLine(done: number, total: number, failed: number): string {
  const filled = Math.round((done / total) * BAR_WIDTH);
  return `\r[${'#'.repeat(filled)}${' '.repeat(BAR_WIDTH - filled)}] ${done}/${total} finished, ${failed} failed`;
}

/** The id of the newest entry of the queue's event stream, '0' when it has none. */
async function lastEventId(queue: Queue, connection: RedisClient): Promise<string> {
  const [newest] = await connection.xrevrange(queue.toKey('events'), '+', '-', 'COUNT', 1);
  return newest?.[0] ?? '0';
}

export async function followJobs(
  queue: QueueOrShards<unknown>,
  jobs: Job[],
  options: { timeoutMs: number; redis: RedisTarget; out: FollowOutput },
): Promise<FollowOutcome> {
  // Job ids are counted per shard, so two shards may hand out the same one: a job is known by its shard too.
  const shards = asShards(queue).shards.filter((shard) =>
    jobs.some((job) => job.queueQualifiedName === shard.qualifiedName),
  );
  const keyOf = (shard: Queue<unknown>, id: string) => `${shard.qualifiedName}|${id}`;
  const pending = new Set(jobs.map((job) => `${job.queueQualifiedName}|${job.id as string}`));
  const outcome: FollowOutcome = { completed: 0, failed: 0, unfinished: 0, failures: [] };
  const total = pending.size;
  const deadline = Date.now() + options.timeoutMs;
  const drawProgress = () => {
    if (options.out.isTTY) options.out.write(progressLine(total - pending.size, total, outcome.failed));
  };
  let allFinished: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (allFinished = resolve));
  // A job is counted once, whichever of the event stream and the state check below reports it first.
  const complete = (shard: Queue<unknown>, id: string) => {
    if (!pending.delete(keyOf(shard, id))) return;
    outcome.completed++;
    drawProgress();
    if (pending.size === 0) allFinished();
  };
  const fail = (shard: Queue<unknown>, id: string, reason: string) => {
    if (!pending.delete(keyOf(shard, id))) return;
    outcome.failed++;
    outcome.failures.push({ jobId: id, reason });
    drawProgress();
    if (pending.size === 0) allFinished();
  };

  // One event stream per shard that has jobs, each on a blocking connection of its own.
  const followed: { connection: RedisClient; events?: QueueEvents }[] = [];
  let timer: NodeJS.Timeout | undefined;
  try {
    for (const shard of shards) {
      const connection = createRedisConnection(options.redis, 'blocking', 'slotfeed-cli-events');
      const follower: (typeof followed)[number] = { connection };
      followed.push(follower);
      // A job may end before the subscription's first XREAD reaches Redis. Reading from the stream's newest
      // entry as it was before the state check below (instead of from '$', "whatever comes next") replays any
      // end in between; an end before that entry is seen by the state check.
      const fromId = await lastEventId(shard, connection);
      const events = new QueueEvents(shard.name, {
        connection,
        prefix: shard.opts.prefix,
        lastEventId: fromId,
      });
      follower.events = events;
      // A lost connection is retried by ioredis (maxRetriesPerRequest: null); the timeout bounds the wait.
      events.on('error', () => undefined);
      events.on('completed', ({ jobId }) => complete(shard, jobId));
      // 'failed' is emitted only once a job has no attempts left; a retried attempt goes back to waiting.
      events.on('failed', ({ jobId, failedReason }) => fail(shard, jobId, failedReason));
      await events.waitUntilReady();
    }

    for (const job of jobs) {
      const shard = shards.find((s) => s.qualifiedName === job.queueQualifiedName)!;
      const id = job.id as string;
      if (!pending.has(keyOf(shard, id))) continue;
      const state = await shard.getJobState(id);
      if (state === 'completed') complete(shard, id);
      else if (state === 'failed') fail(shard, id, (await shard.getJob(id))?.failedReason ?? 'unknown');
      // Removed after finishing (removeOnComplete) before this check: it completed.
      else if (state === 'unknown') complete(shard, id);
    }
    drawProgress();
    if (pending.size > 0) {
      const timedOut = new Promise(
        (resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))),
      );
      await Promise.race([finished, timedOut]);
    }
  } finally {
    clearTimeout(timer);
    // Newest first. QueueEvents disconnects even a connection it was given, to cut its blocking XREAD short (a
    // QUIT would wait behind it). Disconnecting an ended ioredis client again leaves a 2 s timer that would keep
    // the CLI alive, so this disconnects only what is still open (QueueEvents never made, or failed to close).
    for (const { connection, events } of followed.reverse()) {
      await events?.close();
      if (connection.status !== 'end') connection.disconnect();
    }
  }

  outcome.unfinished = pending.size;
  if (options.out.isTTY) options.out.write('\n');
  options.out.write(
    `${outcome.completed} completed, ${outcome.failed} failed${outcome.unfinished ? `, ${outcome.unfinished} still running (timed out waiting)` : ''}\n`,
  );
  for (const failure of outcome.failures) options.out.write(`  job ${failure.jobId}: ${failure.reason}\n`);
  return outcome;
}
