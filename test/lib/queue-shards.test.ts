// Where a queue's shards are, and which shard a job goes to: the names and the hash are part of what an
// installation keeps in Redis, so a release that changed either would strand the jobs queued before it.
import { describe, expect, it } from '@jest/globals';
import { shardIndex, shardPrefix } from '../../src/lib/queue-shards.js';
import { shardConcurrency } from '../../src/lib/shard-workers.js';

describe('queue shards', () => {
  it('keeps REDIS_PREFIX for shard 0 and puts the number inside the hash tag for the others', () => {
    expect(shardPrefix('{slotfeed}', 0)).toBe('{slotfeed}');
    expect(shardPrefix('{slotfeed}', 3)).toBe('{slotfeed-3}');
    expect(shardPrefix('prod:{slotfeed}:x', 2)).toBe('prod:{slotfeed-2}:x');
    // A single server needs no tag: the number is appended.
    expect(shardPrefix('slotfeed', 5)).toBe('slotfeed-5');
  });

  it('sends a connection to the same shard in every process and release', () => {
    expect(shardIndex('0185bbf2-884e-4247-b53a-c089d9efa476', 8)).toBe(1);
    expect(shardIndex('0185bbf2-884e-4247-b53a-c089d9efa476', 1)).toBe(0);
    const counts = new Array<number>(8).fill(0);
    for (let i = 0; i < 8000; i++) counts[shardIndex(`connection-${i}`, 8)]!++;
    // Every shard gets its part (1,000 each on average).
    expect(Math.min(...counts)).toBeGreaterThan(850);
  });

  it('shares a process concurrency among the shards, rounded up so every shard is consumed', () => {
    expect(shardConcurrency(4, 1)).toBe(4);
    expect(shardConcurrency(4, 8)).toBe(1);
    expect(shardConcurrency(32, 8)).toBe(4);
    expect(shardConcurrency(10, 4)).toBe(3);
  });
});
