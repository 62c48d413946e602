// "Send test event", as an integrator checking their receiver uses it: from the admin's "API and webhooks" page,
// from the owner's page and with `slotfeed webhooks test <id>`. Each sends one `webhook.test` through the real
// path: a delivery row numbered in the endpoint's sequence, handed to the BullMQ queue by the dispatcher, POSTed
// by the worker role to a receiver on loopback, signed as every delivery is (checked here with node:crypto's
// HMAC, not with the library slotfeed signs with), and logged on the endpoint like any delivery. A disabled
// endpoint can be tested before it is enabled again; no endpoint can subscribe to the test event; an owner tests
// only their own endpoints.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createTeamStore } from '../../src/store/teams.js';
import { runCapturedCli } from '../support/cli-run.js';
import { waitFor } from '../support/wait-for.js';
import {
  startWebhookReceiver,
  type ReceivedWebhook,
  type WebhookReceiver,
} from '../support/webhook-receiver.js';
import { ADMIN_TOKEN, createWebHarness, type WebHarness } from '../support/web-harness.js';

let h: WebHarness;
let receiver: WebhookReceiver;
let connectionId: string;
let ownerCookie: string;
let strangerCookie: string;

beforeAll(async () => {
  h = await createWebHarness('webhook_test_event', {
    simulator: { users: 2 },
    env: {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_BASE_MS: '200',
      WEBHOOK_DISPATCH_INTERVAL_MS: '100',
    },
  });
  await h.sync.startRoles(['worker']);
  receiver = await startWebhookReceiver();
  const owner = await h.connectViaWeb(h.sync.sim.users[0]!.email);
  connectionId = owner.connectionId;
  ownerCookie = owner.ownerCookie;
  strangerCookie = (await h.connectViaWeb(h.sync.sim.users[1]!.email)).ownerCookie;
});
afterAll(async () => {
  await receiver?.close();
  await h?.close();
});
beforeEach(() => {
  expect(receiver.rejected).toEqual([]);
});

const prisma = () => h.sync.db.prisma;
const messageIdOf = (deliveryId: string) => `msg_${deliveryId.replaceAll('-', '')}`;

/**
 * A new endpoint on the receiver; its id and signing secret (the receiver verifies with it too). It subscribes
 * to what these tests never cause, so that a sync of the account (its first may still be running) sends it
 * nothing: the test event comes whatever an endpoint subscribes to.
 */
async function newEndpoint(owner: { connectionId: string } | { teamId: string } = { connectionId }) {
  const { endpoint, secret } = await h.sync.stores.webhooks.create({
    owner,
    url: receiver.url,
    events: ['connection.needs_reauth'],
  });
  receiver.setSecret(secret);
  return { id: endpoint.id, secret };
}

/** The endpoint's only test delivery, once the queue has had it attempted as often as `attempts`. */
async function testDeliveryOf(endpointId: string, attempts = 1) {
  return waitFor(
    () => prisma().webhookDelivery.findMany({ where: { endpointId, eventType: 'webhook.test' } }),
    (rows) => rows.length === 1 && rows[0]!.attempts >= attempts,
    { what: `the test delivery of ${endpointId} to be attempted` },
  ).then((rows) => rows[0]!);
}

/** What the receiver was sent for `deliveryId`, once it has arrived `count` times. */
async function received(deliveryId: string, count = 1): Promise<ReceivedWebhook[]> {
  const id = messageIdOf(deliveryId);
  await receiver.until((all) => all.filter((r) => r.id === id).length >= count);
  return receiver.requests.filter((r) => r.id === id);
}

/**
 * The Standard Webhooks signature computed here, from the secret and the bytes received:
 * v1,base64(HMAC-SHA256(base64-decoded secret, "<webhook-id>.<webhook-timestamp>.<body>")).
 */
function expectSignedWith(secret: string, message: ReceivedWebhook) {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const mac = createHmac('sha256', key).update(`${message.id}.${message.timestamp}.${message.body}`);
  expect(message.signature.split(' ')).toContain(`v1,${mac.digest('base64')}`);
}

/** The endpoint's row in a delivery log on a page. */
const logRow = (page: string, deliveryId: string) =>
  new RegExp(`<tr [^>]*data-delivery-id="${deliveryId}"[^>]*>([\\s\\S]*?)</tr>`).exec(page)?.[1];

const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
const adminPost = (path: string) =>
  h.request('POST', path, {
    headers: { ...bearer, 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    body: '',
  });
const ownerPost = (path: string, cookie = ownerCookie) =>
  h.request('POST', path, {
    headers: {
      cookie,
      origin: h.url,
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'text/html',
    },
    body: '',
  });

describe('on the admin page', () => {
  it('queues a signed webhook.test, says so, and logs its delivery with the result', async () => {
    const { id, secret } = await newEndpoint();
    // The receiver holds the request open: the test is on its way, its attempt not written yet.
    const holding = receiver.hold((r) => r.type === 'webhook.test');
    const sent = await adminPost(`/admin/api/webhooks/${id}/test`);
    expect(sent.status).toBe(303);
    expect(sent.headers.location).toBe(`/admin/api?tested=${id}#endpoint-${id}`);
    const cardShown = async () => {
      const page = await h.get(String(sent.headers.location), { ...bearer, accept: 'text/html' });
      return new RegExp(`<li class="card" id="endpoint-${id}"[\\s\\S]*?</li>`).exec(page.text)![0];
    };
    const held = await holding;
    const queued = await cardShown();
    expect(queued).toMatch(/role="status"[^>]*>\s*Test event queued/);
    expect(queued).toContain('<details open>');
    const [deliveryId] = /data-delivery-id="([0-9a-f-]{36})"/.exec(queued)!.slice(1);
    expect(held.received.id).toBe(messageIdOf(deliveryId!));
    expect(logRow(queued, deliveryId!)).toMatch(/<code>webhook\.test<\/code>[\s\S]*>queued</);

    held.release();
    const delivery = await testDeliveryOf(id);
    const [message] = await received(delivery.id);
    expectSignedWith(secret, message!);
    expect(JSON.parse(message!.body)).toEqual({
      type: 'webhook.test',
      version: 1,
      timestamp: h.sync.clock.now().toISOString(),
      // The endpoint's first event: the test is numbered in its sequence like any.
      sequence: 1,
      data: { connectionId, endpointId: id },
    });
    // Through the queue, as every delivery goes: the dispatcher handed it over.
    const done = await waitFor(
      () => prisma().webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } }),
      (row) => row.deliveredAt !== null,
      { what: 'the delivery to be recorded' },
    );
    expect(done).toMatchObject({ attempts: 1, lastStatus: 204, givenUpAt: null });
    expect(done.enqueuedAt).not.toBeNull();

    const card = await cardShown();
    expect(card).toMatch(/role="status"[^>]*>\s*Test event delivered: the receiver answered 204 in \d+ ms\./);
    const row = logRow(card, delivery.id)!;
    expect(row).toContain('<code>webhook.test</code>');
    expect(row).toContain('delivered');
    expect(row).toContain('204');
  });

  it('sends a team’s endpoint the team’s id', async () => {
    const team = await createTeamStore(prisma()).create('Test team');
    const { id, secret } = await newEndpoint({ teamId: team.id });
    expect((await adminPost(`/admin/api/webhooks/${id}/test`)).status).toBe(303);
    const [message] = await received((await testDeliveryOf(id)).id);
    expectSignedWith(secret, message!);
    expect(message!.payload.data).toEqual({ teamId: team.id, endpointId: id });
  });

  it('tests a disabled endpoint, once and without retries, and leaves it disabled', async () => {
    const { id, secret } = await newEndpoint();
    const disabledAt = h.sync.clock.now();
    await prisma().webhookEndpoint.update({
      where: { id },
      data: { disabledAt, disabledReason: 'every delivery failed for 24 h', failingSince: disabledAt },
    });
    expect((await adminPost(`/admin/api/webhooks/${id}/test`)).status).toBe(303);
    const [message] = await received((await testDeliveryOf(id)).id);
    expectSignedWith(secret, message!);
    expect((await h.sync.stores.webhooks.get(id)).disabledAt).toEqual(disabledAt);

    // Still broken: the one attempt is logged and given up, not retried for a day.
    await prisma().webhookDelivery.deleteMany({ where: { endpointId: id } });
    receiver.failNext(1, 503);
    expect((await adminPost(`/admin/api/webhooks/${id}/test`)).status).toBe(303);
    const failed = await testDeliveryOf(id);
    await waitFor(
      () => h.sync.clients.webhookQueue.getJobState(failed.id),
      (state) => state === 'completed',
      { what: 'the job to end' },
    );
    expect(await prisma().webhookDelivery.findUniqueOrThrow({ where: { id: failed.id } })).toMatchObject({
      attempts: 1,
      lastStatus: 503,
      deliveredAt: null,
      givenUpAt: expect.any(Date),
    });
    expect(await received(failed.id)).toHaveLength(1);
    expect((await h.sync.stores.webhooks.get(id)).disabledAt).toEqual(disabledAt);
    const page = await h.get(`/admin/api?tested=${id}`, { ...bearer, accept: 'text/html' });
    expect(page.text).toMatch(
      /role="status"[^>]*>\s*Test event not delivered: the receiver answered 503; not retried: the endpoint is disabled\./,
    );
  });

  it('answers 404 for an endpoint that does not exist', async () => {
    const missing = await adminPost('/admin/api/webhooks/00000000-0000-4000-8000-000000000000/test');
    expect(missing.status).toBe(404);
    expect(missing.text).toContain('No such webhook endpoint.');
  });

  it('offers no test event to subscribe to', async () => {
    const page = await h.get('/admin/api', { ...bearer, accept: 'text/html' });
    expect(page.text).toContain('value="booking.inferred"');
    expect(page.text).not.toContain('value="webhook.test"');
    await expect(
      h.sync.stores.webhooks.create({
        owner: { connectionId },
        url: receiver.url,
        events: ['booking.inferred', 'webhook.test'],
      }),
    ).rejects.toThrow(
      /"webhook\.test" is not subscribed to: every endpoint gets it when a test is asked for/,
    );
  });
});

describe('on the owner’s page', () => {
  it('queues a signed webhook.test to their own endpoint, and shows it in the endpoint’s log', async () => {
    const { id, secret } = await newEndpoint();
    const sent = await ownerPost(`/me/webhooks/${id}/test`);
    expect(sent.status).toBe(303);
    expect(sent.headers.location).toBe(`/me?tested=${id}#webhook-${id}`);
    const delivery = await testDeliveryOf(id);
    const [message] = await received(delivery.id);
    expectSignedWith(secret, message!);
    expect(message!.payload).toMatchObject({ type: 'webhook.test', data: { connectionId, endpointId: id } });
    await waitFor(
      () => prisma().webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } }),
      (row) => row.deliveredAt !== null,
      { what: 'the delivery to be recorded' },
    );

    const page = await h.get(String(sent.headers.location), { cookie: ownerCookie, accept: 'text/html' });
    expect(page.text).toMatch(/<details class="card" id="webhooks" open>/);
    const item = new RegExp(`<li id="webhook-${id}"[\\s\\S]*?</li>`).exec(page.text)![0];
    expect(item).toMatch(/role="status"[^>]*>\s*Test event delivered: the receiver answered 204/);
    const row = logRow(item, delivery.id)!;
    expect(row).toContain('<code>webhook.test</code>');
    expect(row).toContain('delivered');
  });

  it('answers 404 for another account’s endpoint, and sends nothing', async () => {
    const { id } = await newEndpoint();
    const foreign = await ownerPost(`/me/webhooks/${id}/test`, strangerCookie);
    expect(foreign.status).toBe(404);
    expect(foreign.text).toContain('No such webhook endpoint on your account.');
    expect(await prisma().webhookDelivery.count({ where: { endpointId: id } })).toBe(0);
  });
});

describe('slotfeed webhooks test', () => {
  const slotfeed = (args: string[]) => runCapturedCli(h.sync.env, ['webhooks', 'test', ...args]);

  it('prints the delivery it queued', async () => {
    const { id, secret } = await newEndpoint();
    const run = await slotfeed([id]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const deliveryId = /delivery ([0-9a-f-]{36})/.exec(run.stdout)![1]!;
    expect(run.stdout).toContain(receiver.url);
    const [message] = await received(deliveryId);
    expectSignedWith(secret, message!);
    expect(message!.payload).toMatchObject({ type: 'webhook.test', data: { endpointId: id } });
  });

  it('with --wait, exits 0 once the receiver answered 2xx', async () => {
    const { id, secret } = await newEndpoint();
    const run = await slotfeed([id, '--wait']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const deliveryId = /delivery ([0-9a-f-]{36})/.exec(run.stdout)![1]!;
    expect(run.stdout).toMatch(/Delivered: the receiver answered 204 in \d+ ms/);
    const [message] = await received(deliveryId);
    expectSignedWith(secret, message!);
  });

  it('with --wait, exits 1 saying what the receiver answered, and the delivery is retried', async () => {
    const { id, secret } = await newEndpoint();
    receiver.failNext(1, 500);
    const run = await slotfeed([id, '--wait']);
    expect(run.code).toBe(1);
    const deliveryId = /delivery ([0-9a-f-]{36})/.exec(run.stdout)![1]!;
    expect(run.stderr).toContain('the receiver answered 500');
    expect(run.stderr).toContain(`slotfeed webhooks deliveries ${id}`);
    const [failed, retried] = await received(deliveryId, 2);
    expect([failed!.status, retried!.status]).toEqual([500, 204]);
    expectSignedWith(secret, retried!);
  });

  it('refuses an unknown endpoint (1) and a malformed id (2), queueing nothing', async () => {
    const before = await prisma().webhookDelivery.count();
    const unknown = await slotfeed(['00000000-0000-4000-8000-000000000000']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no webhook endpoint with id 00000000-0000-4000-8000-000000000000');
    expect((await slotfeed(['not-an-id'])).code).toBe(2);
    expect(await prisma().webhookDelivery.count()).toBe(before);
  });
});
