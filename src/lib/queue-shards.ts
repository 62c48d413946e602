// One queue of an installation spread over REDIS_SHARDS hash tags, so that on a Redis Cluster its keys, and the
// commands on them, can live on several nodes. BullMQ's scripts touch many keys of one queue at once, so a
// queue's keys must share one slot: a shard is a BullMQ queue of its own, its prefix REDIS_PREFIX with its
// number inside the hash tag ({slotfeed} → {slotfeed-3}). What a job is about (a connection, a destination, a
// delivery) picks its shard by a stable hash, so its jobs, its deduplication key and its lock stay together.
//
// Shard 0 keeps REDIS_PREFIX itself: REDIS_SHARDS=1 is the layout from before sharding, key for key, and
// raising it leaves every job already queued where workers still look (shard 0); only new jobs go elsewhere.
// Lowering it strands the jobs of the shards dropped: queueShardsLeftBehind (startup check) says so.
//
// What stays on REDIS_PREFIX's one tag, and why: the scheduler's tick (one job scheduler, so one tick at a time),
// the upstream rate limiter and the call budget (one budget shared by every worker: the upstream's limit is per
// client, not per shard), the per-host CalDAV limits (one per CalDAV server, however many destinations), the
// token-refresh and CalDAV-push locks (processes running with two values of REDIS_SHARDS during a change must
// take the same lock, or a refresh token could be rotated twice), the web role's sessions, OAuth states and rate
// limits, and the retention lock. docs/performance.md measures what share of the commands they carry.
import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';

/** A queue spread over hash tags: `shards[i]`'s keys carry hash tag i; one shard when REDIS_SHARDS is 1. */
export interface QueueShards<Data> {
  readonly shards: readonly Queue<Data>[];
  /** The shard that holds the jobs about `key` (a connection's, a destination's, a delivery's id). */
  shardFor(key: string): Queue<Data>;
}

/** A single queue is a layout of one shard (tests, and tools that look at one queue). */
export type QueueOrShards<Data> = Queue<Data> | QueueShards<Data>;

/** The prefix of shard `index`: REDIS_PREFIX for shard 0, else the index inside its hash tag (or appended). */
export function shardPrefix(prefix: string, index: number): string {
  if (index === 0) return prefix;
  return /\{[^{}]+\}/.test(prefix) ? prefix.replace(/\{([^{}]+)\}/, `{$1-${index}}`) : `${prefix}-${index}`;
}

/** Which of `count` shards holds what is about `key`: stable across processes, releases and restarts. */
export function shardIndex(key: string, count: number): number {
  if (count <= 1) return 0;
  return createHash('sha1').update(key).digest().readUInt32BE(0) % count;
}

export function queueShards<Data>(shards: readonly Queue<Data>[]): QueueShards<Data> {
  if (shards.length === 0) throw new Error('a queue needs at least one shard');
  return { shards, shardFor: (key) => shards[shardIndex(key, shards.length)]! };
}

/** Opens `count` shards of a queue, each with `open(prefix)`. */
export function openQueueShards<Data>(
  prefix: string,
  count: number,
  open: (shardPrefix: string) => Queue<Data>,
): QueueShards<Data> {
  return queueShards(Array.from({ length: count }, (_, i) => open(shardPrefix(prefix, i))));
}

export function asShards<Data>(queue: QueueOrShards<Data>): QueueShards<Data> {
  return 'shards' in queue ? queue : queueShards([queue]);
}

/** `items` by the shard of `keyOf(item)`, in the order of the shards; shards with none left out. */
export function groupByShard<Data, T>(
  queue: QueueShards<Data>,
  items: readonly T[],
  keyOf: (item: T) => string,
): { shard: Queue<Data>; items: T[] }[] {
  const groups = new Map<Queue<Data>, T[]>();
  for (const item of items) {
    const shard = queue.shardFor(keyOf(item));
    const group = groups.get(shard);
    if (group) group.push(item);
    else groups.set(shard, [item]);
  }
  return queue.shards.flatMap((shard) => {
    const group = groups.get(shard);
    return group ? [{ shard, items: group }] : [];
  });
}

/** Closes every shard. */
export async function closeQueueShards(queue: QueueShards<unknown>): Promise<void> {
  await Promise.all(queue.shards.map((shard) => shard.close()));
}
