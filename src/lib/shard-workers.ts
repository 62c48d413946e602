// How a worker process shares its concurrency among the shards of a queue (queue-shards.ts). BullMQ's
// concurrency is per Worker, and a Worker consumes one queue, so a process runs one Worker per shard: each gets
// an equal share, rounded up so that no shard goes unconsumed. The process then runs at most
// ceil(C / N) × N jobs at once: C itself when C is a multiple of REDIS_SHARDS, up to N − 1 more otherwise.
export function shardConcurrency(concurrency: number, shardCount: number): number {
  return Math.max(1, Math.ceil(concurrency / Math.max(1, shardCount)));
}
