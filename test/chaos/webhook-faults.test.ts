// Faults under webhook delivery: the Redis behind the delivery queue lost (killed and restarted empty, or its
// keys deleted under running workers), and worker processes SIGKILLed mid-delivery. Postgres's outbox is the
// source of truth: every delivery row must end delivered (at least once, the receiver acting once per
// webhook-id) or given up with its reason; none may be left pending for good. Real `slotfeed worker` child
// processes and the real clock; the receiver holds a request open to make "mid-delivery" deterministic.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { createTeamStore } from '../../src/store/teams.js';
import { messageIdOf } from '../../src/webhooks/webhook-delivery.js';
import { killProcesses, startWorkerProcess, type SlotfeedProcess } from '../support/child-process.js';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { startOwnRedis, type OwnRedis } from './chaos-support.js';
import { patient } from '../support/patience.js';

let redis: OwnRedis;
let h: SyncHarness;
let receiver: WebhookReceiver;
let survivor: SlotfeedProcess;
const ids: string[] = [];
const children: SlotfeedProcess[] = [];

beforeAll(async () => {
  redis = await startOwnRedis();
  h = await createSyncHarness('chaos_webhooks', {
    clock: null,
    simulator: { users: 3 },
    env: {
      REDIS_URL: redis.url,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_DISPATCH_INTERVAL_MS: '100',
      WEBHOOK_RETRY_BASE_MS: '200',
      WEBHOOK_MAX_ATTEMPTS: '30',
      // A held request stays in flight until the test lets it go or kills its worker.
      WEBHOOK_TIMEOUT_MS: '60000',
      // A killed worker's delivery moves to another after this.
      WORKER_LOCK_SECONDS: '2',
      // The child workers say when they are running.
      LOG_LEVEL: 'info',
    },
  });
  for (const user of h.sim.users) ids.push(await h.connect(user.email));
  // One team endpoint hears every member: one receiver, one secret.
  const teams = createTeamStore(h.clients.prisma);
  const team = await teams.create('Webhook chaos');
  await teams.addMembers(team.id, ids);
  receiver = await startWebhookReceiver();
  const made = await h.stores.webhooks.create({ owner: { teamId: team.id }, url: receiver.url });
  receiver.setSecret(made.secret);
  survivor = await startChildWorker();
}, patient(60_000));
afterAll(async () => {
  await killProcesses(children);
  await receiver?.close();
  await h?.close();
  await redis?.stop();
});

async function startChildWorker(): Promise<SlotfeedProcess> {
  const worker = await startWorkerProcess(h.env);
  children.push(worker);
  return worker;
}

/** Writes `count` outbox rows the way slotfeed does (a connection's grant stops working); their ids. */
async function writeDeliveries(count: number): Promise<string[]> {
  const before = new Set((await allRows()).map((r) => r.id));
  for (let i = 0; i < count; i++) {
    const id = ids[i % ids.length]!;
    await h.clients.prisma.connection.update({ where: { id }, data: { status: 'active' } });
    await h.stores.connections.markNeedsReauth(id, 'invalid_grant', new Date());
  }
  const written = (await allRows()).filter((r) => !before.has(r.id)).map((r) => r.id);
  expect(written).toHaveLength(count);
  return written;
}

const allRows = () => h.clients.prisma.webhookDelivery.findMany({ orderBy: { createdAt: 'asc' } });
const rowsOf = (deliveryIds: readonly string[]) =>
  h.clients.prisma.webhookDelivery.findMany({ where: { id: { in: [...deliveryIds] } } });
const finished = (row: { deliveredAt: Date | null; givenUpAt: Date | null }) =>
  row.deliveredAt !== null || row.givenUpAt !== null;

/** Every row delivered or given up; then none pending, each delivered one acted on by the receiver. */
async function expectEachFinished(deliveryIds: readonly string[], what: string) {
  const rows = await waitFor(
    () => rowsOf(deliveryIds),
    (all) => all.every(finished),
    {
      timeoutMs: 60_000,
      what,
    },
  );
  for (const row of rows) {
    if (row.deliveredAt !== null) expect(receiver.effects.has(messageIdOf(row.id))).toBe(true);
    else expect({ id: row.id, reason: row.lastError }).toEqual({ id: row.id, reason: expect.any(String) });
  }
  expect(
    await h.clients.prisma.webhookDelivery.count({ where: { deliveredAt: null, givenUpAt: null } }),
  ).toBe(0);
  return rows;
}

describe('the delivery queue’s Redis lost with deliveries pending', () => {
  it(
    'killed and restarted empty: every delivery is handed over again and delivered',
    async () => {
      receiver.failNext(Infinity, 503);
      const written = await writeDeliveries(6);
      // Each has failed once and waits in Redis for its retry.
      await waitFor(
        () => rowsOf(written),
        (rows) => rows.every((r) => r.attempts >= 1),
        {
          what: 'every delivery attempted once',
        },
      );
      await redis.kill('SIGKILL');
      await redis.restart();
      receiver.failNext(0);

      const rows = await expectEachFinished(written, 'every delivery delivered after Redis came back empty');
      expect(rows.filter((r) => r.deliveredAt === null)).toEqual([]);
    },
    patient(120_000),
  );

  it(
    'its keys deleted under a running worker (no reconnect): every delivery is handed over again',
    async () => {
      receiver.failNext(Infinity, 503);
      const written = await writeDeliveries(4);
      await waitFor(
        () => rowsOf(written),
        (rows) => rows.every((r) => r.attempts >= 1),
        {
          what: 'every delivery attempted once',
        },
      );
      const admin = new Redis(redis.url, { maxRetriesPerRequest: 2 });
      try {
        await admin.flushall();
      } finally {
        admin.disconnect();
      }
      receiver.failNext(0);

      const rows = await expectEachFinished(written, 'every delivery delivered after the keys were deleted');
      expect(rows.filter((r) => r.deliveredAt === null)).toEqual([]);
    },
    patient(120_000),
  );
});

/** Starts a worker, lets it take the delivery (the receiver holds the request open) and SIGKILLs it. */
async function killWorkerMidDelivery(deliveryId: string) {
  const holding = receiver.hold((r) => r.id === messageIdOf(deliveryId));
  const victim = await startChildWorker();
  await holding;
  victim.child.kill('SIGKILL');
  await victim.exited;
}

describe('worker processes killed mid-delivery', () => {
  it(
    'SIGKILL while the receiver holds the request open: delivered by the other worker',
    async () => {
      // The survivor is paused so that the victim takes the delivery.
      survivor.child.kill('SIGSTOP');
      try {
        const [written] = await writeDeliveries(1);
        await killWorkerMidDelivery(written!);
      } finally {
        survivor.child.kill('SIGCONT');
      }
      const rows = await expectEachFinished(
        (await allRows()).map((r) => r.id),
        'the killed worker’s delivery delivered by the survivor',
      );
      expect(rows.filter((r) => r.deliveredAt === null)).toEqual([]);
    },
    patient(120_000),
  );

  it(
    'its workers killed mid-delivery three times: the queue fails the job, and the row is given up with why',
    async () => {
      survivor.child.kill('SIGSTOP');
      let written: string | undefined;
      try {
        [written] = await writeDeliveries(1);
        // Each next victim's stall check hands it the job the last one died with; the third death is one too many.
        for (let i = 0; i < 3; i++) await killWorkerMidDelivery(written!);
      } finally {
        survivor.child.kill('SIGCONT');
      }
      const [row] = await expectEachFinished([written!], 'the delivery given up after its third worker died');
      expect(row).toMatchObject({ deliveredAt: null, lastError: expect.stringMatching(/stalled/) });
      expect(receiver.effects.has(messageIdOf(written!))).toBe(false);
    },
    patient(180_000),
  );
});
