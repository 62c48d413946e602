// Webhooks end to end: the simulator, a real sync, the outbox, the BullMQ delivery queue run by a real worker
// role, and a receiver that verifies every signature with the `standardwebhooks` package. What an integrator
// relies on: a booking sends exactly one booking.inferred; a sync that changes nothing sends nothing; a 500 is
// retried under the same webhook-id (so a redelivery has no second effect); an endpoint failing for a day is
// disabled; a connection needing re-authorisation is announced; a team's endpoint hears its members.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createTeamStore } from '../../src/store/teams.js';
import { createWebhookStore, WebhookTargetError } from '../../src/store/webhooks.js';
import { createTokenVault } from '../../src/store/token-vault.js';
import { createWebhookDeliveryStore } from '../../src/store/webhook-deliveries.js';
import { attemptDelivery } from '../../src/webhooks/webhook-delivery.js';
import type { FakeClock } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';

let h: WebHarness;
let receiver: WebhookReceiver;
let connectionId: string;
let endpointId: string;

const clock = () => h.sync.clock as FakeClock;
const prisma = () => h.sync.db.prisma;

/** Books the earliest open slot of the connection in the simulator and syncs; the slot booked. */
async function bookAndSync(id = connectionId) {
  const slot = await prisma().slot.findFirstOrThrow({
    // Still bookable: tests move the clock on.
    where: {
      connectionId: id,
      goneAt: null,
      startsAt: { gt: new Date(clock().now().getTime() + 2 * 3600_000) },
    },
    orderBy: [{ startsAt: 'asc' }, { upstreamEventId: 'asc' }],
  });
  h.sync.sim.control.book(slot.upstreamEventId, slot.startsAt.toISOString());
  await h.syncNow(id);
  return slot;
}

const deliveriesOf = (endpoint: string) =>
  prisma().webhookDelivery.findMany({ where: { endpointId: endpoint }, orderBy: { createdAt: 'asc' } });

beforeAll(async () => {
  h = await createWebHarness('webhooks', {
    simulator: { users: 3 },
    env: {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_BASE_MS: '200',
      WEBHOOK_MAX_ATTEMPTS: '12',
      WEBHOOK_DISPATCH_INTERVAL_MS: '100',
      // A request the receiver holds open (a slow delivery) is not cut short while the test goes on.
      WEBHOOK_TIMEOUT_MS: '60000',
    },
  });
  await h.sync.startRoles(['worker']);
  receiver = await startWebhookReceiver();
  const connected = await h.connectViaWeb(h.sync.sim.users[0]!.email);
  connectionId = connected.connectionId;
  await h.syncNow(connectionId);
  const made = await h.sync.stores.webhooks.create({ owner: { connectionId }, url: receiver.url });
  endpointId = made.endpoint.id;
  receiver.setSecret(made.secret);
});
afterAll(async () => {
  await receiver?.close();
  await h?.close();
});
beforeEach(() => {
  expect(receiver.rejected).toEqual([]);
});

describe('what is sent', () => {
  it('nothing for a sync that changes nothing', async () => {
    await h.syncNow(connectionId);
    // The outbox is where every delivery starts: a no-change sync wrote none.
    expect(await deliveriesOf(endpointId)).toEqual([]);
    const run = await prisma().syncRun.findFirstOrThrow({
      where: { connectionId },
      orderBy: { startedAt: 'desc' },
    });
    expect(run.outcome).toBe('succeeded');
  });

  it('a booking: exactly one booking.inferred, and the availability that closed, signed', async () => {
    const slot = await bookAndSync();
    await receiver.until((r) => r.some((x) => x.type === 'booking.inferred'));
    const rows = await deliveriesOf(endpointId);
    expect(rows.map((r) => r.eventType).sort()).toEqual(['availability.changed', 'booking.inferred']);
    await receiver.until((r) => r.filter((x) => x.status < 300).length === 2);
    const booking = receiver.requests.filter((r) => r.type === 'booking.inferred');
    expect(booking).toHaveLength(1);
    expect(booking[0]!.payload).toMatchObject({
      type: 'booking.inferred',
      version: 1,
      data: { connectionId, booking: { start: slot.startsAt.toISOString() } },
    });
    const changed = receiver.requests.find((r) => r.type === 'availability.changed')!.payload.data as {
      eventTypes: { eventTypeId: string; closed: { start: string }[]; opened: unknown[] }[];
    };
    const closedStarts = changed.eventTypes.flatMap((e) => e.closed.map((c) => c.start));
    expect(closedStarts).toContain(slot.startsAt.toISOString());
    // webhook-id is the delivery's, and the row says it went through.
    await waitFor(
      () => deliveriesOf(endpointId),
      (all) => all.every((d) => d.deliveredAt !== null),
      {
        what: 'deliveries recorded',
      },
    );
    for (const row of await deliveriesOf(endpointId)) {
      expect(row).toMatchObject({ attempts: 1, lastStatus: 204, givenUpAt: null });
      expect(row.lastLatencyMs).not.toBeNull();
    }
  });

  it('a connection that needs re-authorisation, once', async () => {
    await h.sync.stores.connections.markNeedsReauth(connectionId, 'invalid_grant', clock().now());
    await h.sync.stores.connections.markNeedsReauth(connectionId, 'invalid_grant again', clock().now());
    await receiver.until((r) => r.some((x) => x.type === 'connection.needs_reauth'));
    const rows = (await deliveriesOf(endpointId)).filter((d) => d.eventType === 'connection.needs_reauth');
    expect(rows).toHaveLength(1);
    expect(receiver.requests.find((r) => r.type === 'connection.needs_reauth')!.payload.data).toEqual({
      connectionId,
    });
    await prisma().connection.update({ where: { id: connectionId }, data: { status: 'active' } });
  });
});

describe('retries', () => {
  it('retries after a 500 under the same webhook-id, and the receiver acts once', async () => {
    receiver.failNext(2);
    const before = receiver.requests.length;
    await bookAndSync();
    await receiver.until(
      (r) => r.slice(before).filter((x) => x.type === 'booking.inferred' && x.status < 300).length === 1,
    );
    const attempts = receiver.requests.slice(before).filter((x) => x.type === 'booking.inferred');
    const ids = new Set(attempts.map((a) => a.id));
    expect(ids.size).toBe(1);
    expect(attempts.map((a) => a.status).filter((s) => s >= 500).length).toBeGreaterThanOrEqual(1);
    const [id] = ids;
    // Delivered again on purpose (an at-least-once queue may): same id, no second effect.
    const row = await waitFor(
      async () => (await deliveriesOf(endpointId)).find((d) => `msg_${d.id.replaceAll('-', '')}` === id)!,
      (found) => found.deliveredAt !== null,
      { what: 'the worker to record the delivery' },
    );
    await prisma().webhookDelivery.update({ where: { id: row.id }, data: { deliveredAt: null } });
    const effectsBefore = receiver.effects.size;
    await attemptDelivery(
      {
        deliveries: createWebhookDeliveryStore(prisma()),
        secretOf: (endpoint) => h.sync.stores.webhooks.secretOf(endpoint),
        now: clock().now,
        settings: { timeoutMs: 5000, allowPrivateTargets: true, disableAfterSeconds: 86_400 },
      },
      row.id,
    );
    expect(receiver.requests.filter((r) => r.id === id).length).toBe(attempts.length + 1);
    expect(receiver.effects.size).toBe(effectsBefore);
    const recorded = await prisma().webhookDelivery.findUniqueOrThrow({ where: { id: row.id } });
    expect(recorded.attempts).toBeGreaterThanOrEqual(3);
  });

  it('disables an endpoint that has failed for a day, and says so', async () => {
    const failing = await startWebhookReceiver();
    try {
      const made = await h.sync.stores.webhooks.create({ owner: { connectionId }, url: failing.url });
      failing.setSecret(made.secret);
      failing.failNext(Infinity, 503);
      await bookAndSync();
      await failing.until((r) => r.length >= 1);
      await waitFor(
        () => h.sync.stores.webhooks.get(made.endpoint.id),
        (e) => e.failingSince !== null,
        { what: 'the failing streak to start' },
      );
      expect((await h.sync.stores.webhooks.get(made.endpoint.id)).disabledAt).toBeNull();
      clock().advance(24 * 3600 + 1);
      const disabled = await waitFor(
        () => h.sync.stores.webhooks.get(made.endpoint.id),
        (e) => e.disabledAt !== null,
        { what: 'the endpoint to be disabled' },
      );
      expect(disabled.disabledReason).toMatch(/every delivery failed for 24 h/);
      // The endpoint is disabled, then its pending deliveries given up: two statements (webhook-delivery.ts), so
      // the second is waited for, not assumed done when the first is seen.
      const rows = await waitFor(
        () => deliveriesOf(made.endpoint.id),
        (all) => all.every((d) => d.givenUpAt !== null),
        { what: "the disabled endpoint's deliveries to be given up" },
      );
      expect(rows.every((d) => d.deliveredAt === null)).toBe(true);
      // A disabled endpoint gets nothing new.
      await bookAndSync();
      expect((await deliveriesOf(made.endpoint.id)).length).toBe(rows.length);
    } finally {
      await failing.close();
    }
  });
});

describe('ordering', () => {
  it('an older availability.changed that arrives after a newer one carries the lower sequence', async () => {
    const before = receiver.requests.length;
    const changes = () =>
      receiver.requests.slice(before).filter((r) => r.type === 'availability.changed' && r.status < 300);
    // The first sync's delivery is slow (held open); the second sync's overtakes it.
    const holding = receiver.hold((r) => r.type === 'availability.changed');
    await bookAndSync();
    const older = await holding;
    await bookAndSync();
    await receiver.until(() => changes().length === 1);
    older.release();
    await receiver.until(() => changes().length === 2);
    const [first, second] = changes();
    expect(second!.id).toBe(older.received.id);
    // What a receiver orders by: the endpoint's sequence, in the order the syncs committed.
    expect(second!.payload.sequence).toBeLessThan(first!.payload.sequence!);
    // One number per delivery of the endpoint, none skipped: a receiver can tell one is still missing.
    const sequences = (await deliveriesOf(endpointId)).map(
      (d) => (d.payload as { sequence?: number }).sequence,
    );
    expect([...sequences].sort((a, b) => a! - b!)).toEqual(sequences.map((_, i) => i + 1));
  });
});

describe('teams and targets', () => {
  it('a team’s endpoint hears each member, with the team’s id', async () => {
    const teams = createTeamStore(prisma());
    const other = await h.connectViaWeb(h.sync.sim.users[1]!.email);
    await h.syncNow(other.connectionId);
    const team = await teams.create('Webhook team');
    await teams.addMembers(team.id, [other.connectionId]);
    const teamReceiver = await startWebhookReceiver();
    try {
      const made = await h.sync.stores.webhooks.create({
        owner: { teamId: team.id },
        url: teamReceiver.url,
        events: ['booking.inferred'],
      });
      teamReceiver.setSecret(made.secret);
      await bookAndSync(other.connectionId);
      await teamReceiver.until((r) => r.length === 1);
      expect(teamReceiver.requests[0]!.payload.data).toMatchObject({
        teamId: team.id,
        connectionId: other.connectionId,
      });
      expect(teamReceiver.rejected).toEqual([]);
    } finally {
      await teamReceiver.close();
    }
  });

  it('refuses private and loopback targets unless the switch allows them, at registration and on connecting', async () => {
    const vault = createTokenVault({ id: 'k1', key: Buffer.alloc(32, 7) });
    const store = createWebhookStore(prisma(), vault, { allowPrivateTargets: false });
    for (const url of [
      'http://127.0.0.1:9/x',
      'http://localhost/x',
      'http://localhost./x',
      'http://x.localhost./x',
      'http://[::1]/x',
      'http://10.0.0.8/x',
      'http://169.254.169.254/latest',
    ]) {
      await expect(store.create({ owner: { connectionId }, url })).rejects.toBeInstanceOf(WebhookTargetError);
    }
    await expect(store.create({ owner: { connectionId }, url: 'ftp://example.com/x' })).rejects.toThrow(
      /http or https/,
    );
    await expect(
      store.create({ owner: { connectionId }, url: 'https://example.com/x', events: ['everything'] }),
    ).rejects.toThrow(/no event "everything"/);
    // An endpoint that names a loopback address anyway (made while the switch was on): refused when connecting.
    const made = await store.create({ owner: { connectionId }, url: 'https://example.com/x' });
    await prisma().webhookEndpoint.update({ where: { id: made.endpoint.id }, data: { url: receiver.url } });
    const [row] = await prisma().webhookDelivery.createManyAndReturn({
      data: [
        {
          id: crypto.randomUUID(),
          endpointId: made.endpoint.id,
          eventType: 'booking.inferred',
          payload: {},
          createdAt: clock().now(),
          enqueuedAt: clock().now(),
        },
      ],
    });
    const before = receiver.requests.length;
    const attempt = () =>
      attemptDelivery(
        {
          deliveries: createWebhookDeliveryStore(prisma()),
          secretOf: (id) => store.secretOf(id),
          now: clock().now,
          settings: { timeoutMs: 5000, allowPrivateTargets: false, disableAfterSeconds: 86_400 },
        },
        row!.id,
      );
    expect(await attempt()).toBe('failed');
    expect(receiver.requests.length).toBe(before);
    expect((await prisma().webhookDelivery.findUniqueOrThrow({ where: { id: row!.id } })).lastError).toMatch(
      /127\.0\.0\.1|private|not allowed/i,
    );
    // The same name check on connecting, however the name is spelled: "localhost." is localhost.
    const dotted = new URL(receiver.url);
    dotted.hostname = 'LocalHost.';
    await prisma().webhookEndpoint.update({ where: { id: made.endpoint.id }, data: { url: dotted.href } });
    await prisma().webhookDelivery.update({ where: { id: row!.id }, data: { lastError: null } });
    expect(await attempt()).toBe('failed');
    expect(receiver.requests.length).toBe(before);
    expect((await prisma().webhookDelivery.findUniqueOrThrow({ where: { id: row!.id } })).lastError).toMatch(
      /loopback|private/i,
    );
  });
});
