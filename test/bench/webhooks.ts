// Benchmark: webhook delivery latency, from a sync's commit to the receiver's receipt, with 1,000 connections
// changing. Each connection has an endpoint; then every connection commits a snapshot in which one slot was
// booked (eight commits at a time, as busy workers would), and a loopback receiver verifies each delivery with
// `standardwebhooks` and notes when it arrived. The worker role (dispatcher and delivery queue) runs in this
// process, as `slotfeed start` runs it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { Webhook } from 'standardwebhooks';
import { commitSuccessfulSync, type SnapshotInput } from '../../src/store/snapshots.js';
import type { FetchedSlot } from '../../src/store/slot-diff.js';
import { createWebHarness } from '../support/web-harness.js';
import { check, type BenchSection } from './bench-result.js';
import { round } from './process-stats.js';

const SLOTS = 24;

function snapshotWith(slots: FetchedSlot[]): SnapshotInput {
  return {
    profile: { payload: { name: 'Bench' }, email: 'bench@example.test', name: 'Bench', timezone: 'UTC' },
    eventTypes: [
      {
        upstreamEventId: 'evt_bench',
        title: 'Bench call',
        durationMinutes: 30,
        enabled: true,
        secret: false,
        url: null,
        color: null,
        payload: { event_id: 'evt_bench' },
      },
    ],
    overviews: [],
    slots,
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

export async function benchWebhooks(options: { connections?: number } = {}): Promise<BenchSection[]> {
  const count = options.connections ?? 1000;
  const h = await createWebHarness('bench_webhooks', {
    env: {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_CONCURRENCY: '32',
      WEBHOOK_DISPATCH_INTERVAL_MS: '1000',
    },
  });
  const received = new Map<string, number>();
  const verifiers = new Map<string, Webhook>();
  let rejected = 0;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const at = performance.now();
      const connectionId = (request.url ?? '').split('/').pop() ?? '';
      try {
        verifiers.get(connectionId)!.verify(Buffer.concat(chunks).toString('utf8'), {
          'webhook-id': String(request.headers['webhook-id']),
          'webhook-timestamp': String(request.headers['webhook-timestamp']),
          'webhook-signature': String(request.headers['webhook-signature']),
        });
        if (!received.has(connectionId)) received.set(connectionId, at);
        response.writeHead(204).end();
      } catch {
        rejected += 1;
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  try {
    const prisma = h.sync.db.prisma;
    const now = h.sync.clock.now();
    const slots: FetchedSlot[] = Array.from({ length: SLOTS }, (_, i) => {
      const startsAt = new Date(now.getTime() + (i + 2) * 3_600_000);
      return { eventId: 'evt_bench', startsAt, endsAt: new Date(startsAt.getTime() + 1_800_000) };
    });
    const run = () => ({ id: randomUUID(), jobId: null, attempt: 1, startedAt: now, callsByEndpoint: {} });
    const ids: string[] = [];
    const setup = pLimit(16);
    await Promise.all(
      Array.from({ length: count }, () =>
        setup(async () => {
          const connection = await prisma.connection.create({
            data: { upstreamUserId: `bench-${randomUUID()}`, timezone: 'UTC' },
          });
          await commitSuccessfulSync(prisma, {
            connectionId: connection.id,
            snapshot: snapshotWith(slots),
            run: run(),
            now,
            next: now,
          });
          const { secret } = await h.sync.stores.webhooks.create({
            owner: { connectionId: connection.id },
            url: `${base}/${connection.id}`,
            events: ['availability.changed'],
          });
          verifiers.set(connection.id, new Webhook(secret));
          ids.push(connection.id);
        }),
      ),
    );
    await h.sync.startRoles(['worker']);

    // Every connection sees its first slot booked; a sync commits that, then tells the dispatcher (as the
    // worker's sync does).
    const committedAt = new Map<string, number>();
    const commit = pLimit(8);
    const started = performance.now();
    await Promise.all(
      ids.map((connectionId) =>
        commit(async () => {
          const changes = await commitSuccessfulSync(prisma, {
            connectionId,
            snapshot: snapshotWith(slots.slice(1)),
            run: run(),
            now,
            next: now,
          });
          committedAt.set(connectionId, performance.now());
          check(changes.webhookDeliveries === 1, `a commit wrote ${changes.webhookDeliveries} deliveries`);
          h.sync.services.webhookWrites.notify();
        }),
      ),
    );
    const committedAll = performance.now();
    while (received.size < count) {
      check(
        performance.now() - started < 300_000,
        `only ${received.size} of ${count} delivered in 5 minutes`,
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    check(rejected === 0, `${rejected} signatures did not verify`);
    const latencies = ids.map((id) => received.get(id)! - committedAt.get(id)!).sort((a, b) => a - b);
    return [
      {
        benchmark: 'webhook delivery, commit to receipt',
        inputs: {
          connections: count,
          commitsAtOnce: 8,
          workerConcurrency: 32,
          receiver: 'loopback node:http, verifying every signature with standardwebhooks',
        },
        figures: {
          p50Ms: round(percentile(latencies, 50), 0),
          p95Ms: round(percentile(latencies, 95), 0),
          maxMs: round(latencies.at(-1)!, 0),
          commitSeconds: round((committedAll - started) / 1000, 1),
          allDeliveredSeconds: round((Math.max(...received.values()) - started) / 1000, 1),
        },
      },
    ];
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await h.close();
  }
}
