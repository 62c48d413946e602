// Redis: where it is (one server or a cluster) and the prefix of every key slotfeed writes.
import { z } from 'zod';
import { positiveInt } from './value-schemas.js';
import { section, variable } from './variable.js';

const redisUrl = z
  .string()
  .url()
  .refine((v) => /^rediss?:\/\//.test(v), 'must be a redis:// or rediss:// URL');

export const redisSection = section({
  variables: {
    url: variable({
      name: 'REDIS_URL',
      description: 'Redis connection URL (BullMQ queues, locks, OAuth state).',
      default: 'redis://127.0.0.1:6379',
      secret: true,
      schema: redisUrl,
    }),
    prefix: variable({
      name: 'REDIS_PREFIX',
      description:
        'Prefix of every Redis key slotfeed writes, so several installations can share one Redis; on a Redis Cluster it must hold a hash tag, e.g. {slotfeed}.',
      default: 'slotfeed',
      schema: z
        .string()
        .regex(/^[A-Za-z0-9_:{}-]+$/, 'letters, digits, "_", ":", "-" and one {hash tag} only')
        .refine(
          (v) => !/[{}]/.test(v) || /^[^{}]*\{[^{}]+\}[^{}]*$/.test(v),
          'a hash tag is one {…} with something inside',
        ),
    }),
    shards: variable({
      name: 'REDIS_SHARDS',
      description:
        'How many hash tags the per-connection queues (syncs, CalDAV pushes, webhook deliveries) are spread over: shard 0 keeps REDIS_PREFIX, shard i puts -i inside its hash tag ({slotfeed-3}), so on a Redis Cluster each shard may live on another node. 1 keeps every key under REDIS_PREFIX. Raising it keeps every pending job where workers still take it; lowering it leaves the jobs of the shards dropped to be queued again from Postgres (docs/operating.md).',
      default: '1',
      schema: positiveInt(256),
    }),
    clusterNodes: variable({
      name: 'REDIS_CLUSTER_NODES',
      description:
        'A Redis Cluster to use instead of REDIS_URL’s server: some of its nodes, host:port, comma-separated (credentials and TLS still come from REDIS_URL). Empty: a single server.',
      default: '',
      schema: z.string().transform((v, ctx) => {
        const nodes = v
          .split(',')
          .map((n) => n.trim())
          .filter((n) => n !== '');
        const parsed = nodes.map((node) => /^(\[[0-9a-fA-F:]+\]|[^:\s]+):(\d{1,5})$/.exec(node));
        if (parsed.some((m) => m === null)) {
          ctx.addIssue({ code: 'custom', message: 'must be host:port pairs, comma-separated' });
          return z.NEVER;
        }
        return parsed.map((m) => ({ host: m![1]!.replace(/^\[|\]$/g, ''), port: Number(m![2]) }));
      }),
    }),
  },
  // BullMQ's scripts and slotfeed's own touch several keys at once: on a cluster they must share a slot.
  check: ({ prefix, clusterNodes }) =>
    clusterNodes?.length && prefix && !/\{[^{}]+\}/.test(prefix)
      ? [
          `REDIS_PREFIX must hold a hash tag such as {${prefix}} when REDIS_CLUSTER_NODES is set: every key of one installation must be in one slot`,
        ]
      : [],
});
