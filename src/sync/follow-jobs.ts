// `slotfeed sync --wait`: follows enqueued jobs to their end. On a terminal it redraws one progress line; in a
// pipe it stays quiet until the summary, so scripts get clean output.
// It learns of each job's end from the queue's event stream (BullMQ's QueueEvents) rather than by polling.
// QueueEvents blocks on XREAD, so it gets a connection of its own, made here and closed when following ends.
import { QueueEvents, type Job, type Queue } from 'bullmq';
import type { RedisClient, RedisTarget } from '../lib/redis-connection.js';
import { createRedisConnection } from '../lib/redis-connection.js';

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
  queue: Queue,
  jobs: Job[],
  options: { timeoutMs: number; redis: RedisTarget; out: FollowOutput },
): Promise<FollowOutcome> {
  const pending = new Set(jobs.map((job) => job.id as string));
  const outcome: FollowOutcome = { completed: 0, failed: 0, unfinished: 0, failures: [] };
  const total = pending.size;
  const deadline = Date.now() + options.timeoutMs;
  const drawProgress = () => {
    if (options.out.isTTY) options.out.write(progressLine(total - pending.size, total, outcome.failed));
  };
  let allFinished: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (allFinished = resolve));
  // A job is counted once, whichever of the event stream and the state check below reports it first.
  const complete = (id: string) => {
    if (!pending.delete(id)) return;
    outcome.completed++;
    drawProgress();
    if (pending.size === 0) allFinished();
  };
  const fail = (id: string, reason: string) => {
    if (!pending.delete(id)) return;
    outcome.failed++;
    outcome.failures.push({ jobId: id, reason });
    drawProgress();
    if (pending.size === 0) allFinished();
  };

  const connection = createRedisConnection(options.redis, 'blocking', 'slotfeed-cli-events');
  let events: QueueEvents | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    // A job may end before the subscription's first XREAD reaches Redis. Reading from the stream's newest
    // entry as it was before the state check below (instead of from '$', "whatever comes next") replays any
    // end in between; an end before that entry is seen by the state check.
    const fromId = await lastEventId(queue, connection);
    events = new QueueEvents(queue.name, { connection, prefix: queue.opts.prefix, lastEventId: fromId });
    // A lost connection is retried by ioredis (maxRetriesPerRequest: null); the timeout bounds the wait.
    events.on('error', () => undefined);
    events.on('completed', ({ jobId }) => complete(jobId));
    // 'failed' is emitted only once a job has no attempts left; a retried attempt goes back to waiting.
    events.on('failed', ({ jobId, failedReason }) => fail(jobId, failedReason));
    await events.waitUntilReady();

    for (const id of [...pending]) {
      const state = await queue.getJobState(id);
      if (state === 'completed') complete(id);
      else if (state === 'failed') fail(id, (await queue.getJob(id))?.failedReason ?? 'unknown');
      // Removed after finishing (removeOnComplete) before this check: it completed.
      else if (state === 'unknown') complete(id);
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
    await events?.close();
    if (connection.status !== 'end') connection.disconnect();
  }

  outcome.unfinished = pending.size;
  if (options.out.isTTY) options.out.write('\n');
  options.out.write(
    `${outcome.completed} completed, ${outcome.failed} failed${outcome.unfinished ? `, ${outcome.unfinished} still running (timed out waiting)` : ''}\n`,
  );
  for (const failure of outcome.failures) options.out.write(`  job ${failure.jobId}: ${failure.reason}\n`);
  return outcome;
}
