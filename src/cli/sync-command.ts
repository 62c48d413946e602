// `slotfeed sync <id…> | --all [--wait]`: enqueues syncs now, deduplicated like the scheduler's, and with
// `--wait` follows them. It only adds jobs for the workers, so it reads the database, Redis and the sync
// settings, and none of the upstream, token-key or web variables a worker or the web role needs.
import { Option, type Command } from 'commander';
import { loadConfig } from '../config.js';
import { Releasers } from '../lib/releasers.js';
import { createLoggerFor } from '../log.js';
import { openCommandDatabase, openSyncQueue } from '../composition/command-stores.js';
import { followJobs } from '../sync/follow-jobs.js';
import { enqueueSyncs } from '../sync/queues.js';
import { wholeNumber } from './argument-parsers.js';
import type { Output } from './commands.js';
import { requireRedisAnswers } from './redis-check.js';
import { UsageError } from './usage-error.js';
import { redisTargetOf } from '../lib/redis-connection.js';

type Env = Record<string, string | undefined>;

export interface SyncRequest {
  connectionIds: string[];
  all: boolean;
  wait: boolean;
  timeoutSeconds: number;
}

/**
 * Why a worker would skip this connection, and what makes it syncable again. When and why a connection was
 * disabled is not stored, so it is not said.
 */
function whyNotSynced({ id, status }: { id: string; status: string }): string {
  switch (status) {
    case 'disabled':
      return (
        `connection ${id} is disabled, so it is not synced: enable it with \`slotfeed connections enable ${id}\` ` +
        `(or Enable on its admin page, /admin/connections/${id}): it then syncs at the scheduler's next tick.`
      );
    case 'needs_reauth':
      return (
        `connection ${id} needs re-authorisation, so it cannot be synced: its owner must connect the account ` +
        'again (the connect page, /connect): it then syncs by itself.'
      );
    default:
      return `connection ${id} is ${status}, so it is not synced.`;
  }
}

export async function runSync(
  env: Env,
  request: SyncRequest,
  out: Output & { isTTY: boolean },
): Promise<{ failed: number }> {
  const config = loadConfig(env, ['database', 'redis', 'sync', 'log']);
  const logger = createLoggerFor(config.log);
  const releasers = new Releasers();
  try {
    const { connectionAdmin } = openCommandDatabase(config, releasers, logger);
    // Unknown ids, and connections the workers would skip, are refused before anything is enqueued.
    const ids = request.all ? await connectionAdmin.activeIds() : request.connectionIds;
    const named: { id: string; status: string }[] = [];
    for (const id of request.all ? [] : ids) named.push(await connectionAdmin.require(id));
    const notSynced = named.filter((c) => c.status !== 'active');
    if (notSynced.length > 0) {
      throw new Error(`${notSynced.map(whyNotSynced).join('\n')}\nNothing was enqueued.`);
    }
    const { redis, syncQueue } = openSyncQueue(config, releasers);
    await requireRedisAnswers(redis, config.redis.url);
    const jobs = await enqueueSyncs(syncQueue, ids, config.sync.maxAttempts);
    out.write(`Enqueued ${jobs.length} sync job(s).\n`);
    if (!request.wait || jobs.length === 0) return { failed: 0 };
    // Every worker process consumes every shard: shard 0's workers are all of them.
    if ((await syncQueue.shards[0]!.getWorkers()).length === 0) {
      // Workers are found under REDIS_PREFIX: a worker of another installation (or of the demo, whose prefix
      // is slotfeed-demo-<hash of its data directory>) does not count. Following jobs nobody takes would only
      // wait out --timeout, so say so now; the jobs stay queued for the first worker that starts.
      throw new Error(
        `No worker is running under REDIS_PREFIX "${config.redis.prefix}", so nothing would take the ` +
          `${jobs.length} job(s): they stay queued and run when one starts. Start one with \`slotfeed worker\` ` +
          '(or `slotfeed start`), or check REDIS_PREFIX and REDIS_URL.',
      );
    }
    const outcome = await followJobs(syncQueue, jobs, {
      timeoutMs: request.timeoutSeconds * 1000,
      redis: redisTargetOf(config.redis),
      out,
    });
    return { failed: outcome.failed + outcome.unfinished };
  } finally {
    await releasers.releaseAll(logger);
  }
}

export function registerSyncCommand(program: Command, env: Env, stdout: Output & { isTTY: boolean }): void {
  program
    .command('sync')
    .description(
      'Enqueue a sync now for the given connections (or all active ones); deduplicated with pending jobs.',
    )
    .argument('[connection-ids...]', 'connection ids (see `slotfeed connections list`)')
    .option('--all', 'every active connection')
    .option('--wait', 'follow the jobs to the end, with a progress bar on a terminal')
    .addOption(
      new Option('--timeout <seconds>', 'how long --wait waits')
        .argParser(wholeNumber(1, 86_400))
        .default(600),
    )
    .action(async (ids: string[], options: { all?: boolean; wait?: boolean; timeout: number }) => {
      if ((ids.length === 0) === !options.all) {
        throw new UsageError('give connection ids or --all (not both)');
      }
      const malformed = ids.filter((id) => !/^[0-9a-f-]{36}$/i.test(id));
      if (malformed.length > 0) throw new UsageError(`not a connection id: ${malformed.join(', ')}`);
      const { failed } = await runSync(
        env,
        {
          connectionIds: ids,
          all: options.all ?? false,
          wait: options.wait ?? false,
          timeoutSeconds: options.timeout,
        },
        stdout,
      );
      if (failed > 0) throw new Error(`${failed} sync job(s) did not complete`);
    });
}
