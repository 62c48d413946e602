// `slotfeed sync --wait`: follows enqueued jobs to their end. On a terminal it redraws one progress line; in a
// pipe it stays quiet until the summary, so scripts get clean output.
import type { Job, Queue } from 'bullmq';

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

export async function followJobs(
  queue: Queue,
  jobs: Job[],
  options: { timeoutMs: number; pollMs?: number; out: FollowOutput },
): Promise<FollowOutcome> {
  const pending = new Set(jobs.map((job) => job.id as string));
  const outcome: FollowOutcome = { completed: 0, failed: 0, unfinished: 0, failures: [] };
  const deadline = Date.now() + options.timeoutMs;
  const total = pending.size;

  while (pending.size > 0 && Date.now() < deadline) {
    for (const id of [...pending.keys()]) {
      const state = await queue.getJobState(id);
      if (state === 'completed') {
        outcome.completed++;
        pending.delete(id);
      } else if (state === 'failed') {
        const fresh = await queue.getJob(id);
        outcome.failed++;
        outcome.failures.push({ jobId: id, reason: fresh?.failedReason ?? 'unknown' });
        pending.delete(id);
      } else if (state === 'unknown') {
        // Removed after finishing (removeOnComplete) between two polls: it completed.
        outcome.completed++;
        pending.delete(id);
      }
    }
    if (options.out.isTTY) options.out.write(progressLine(total - pending.size, total, outcome.failed));
    if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 500));
  }
  outcome.unfinished = pending.size;
  if (options.out.isTTY) options.out.write('\n');
  options.out.write(
    `${outcome.completed} completed, ${outcome.failed} failed${outcome.unfinished ? `, ${outcome.unfinished} still running (timed out waiting)` : ''}\n`,
  );
  for (const failure of outcome.failures) options.out.write(`  job ${failure.jobId}: ${failure.reason}\n`);
  return outcome;
}
