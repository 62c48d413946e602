// A webhook endpoint gets every event of an installation, so deliveries to it share a kept connection (issue 43:
// before, a delivery through the private-address filter opened a connection, and over https a TLS handshake,
// each time). A delivery sent on a kept connection the receiver had closed meanwhile is sent again at once on a
// new one, rather than failing an attempt and waiting out a retry; a receiver that answers is never posted twice.
// Against a real node:http receiver on loopback.
import { afterEach, expect, it } from '@jest/globals';
import { sharedKeepAliveAgents } from '../../src/lib/keep-alive-agents.js';
import { deliveryAgent } from '../../src/webhooks/target-policy.js';
import { postDelivery, type WebhookDeliverySettings } from '../../src/webhooks/webhook-delivery.js';
import { startKeptConnectionServer, type KeptConnectionServer } from '../support/kept-connection-server.js';

const settings: WebhookDeliverySettings = {
  timeoutMs: 10_000,
  allowPrivateTargets: true,
  disableAfterSeconds: 86_400,
};
const headers = { 'content-type': 'application/json', 'webhook-id': 'msg_test' };

const receivers: KeptConnectionServer[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

async function startReceiver(): Promise<KeptConnectionServer> {
  const receiver = await startKeptConnectionServer('/hooks', () => 204);
  receivers.push(receiver);
  return receiver;
}
const bodiesOf = (receiver: KeptConnectionServer) => receiver.requests.map((request) => request.body);

it('deliveries to one endpoint share a kept connection', async () => {
  const receiver = await startReceiver();
  for (const n of [1, 2, 3]) {
    expect(await postDelivery(receiver.url, `{"n":${n}}`, headers, settings)).toEqual({ status: 204 });
  }
  expect(bodiesOf(receiver)).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
  expect(receiver.connections).toBe(1);
});

it('a delivery on a kept connection the receiver closed is sent again at once, on a new one', async () => {
  const receiver = await startReceiver();
  expect(await postDelivery(receiver.url, '{"n":1}', headers, settings)).toEqual({ status: 204 });
  receiver.dropNextOnKeptConnection = true;
  expect(await postDelivery(receiver.url, '{"n":2}', headers, settings)).toEqual({ status: 204 });
  expect(bodiesOf(receiver)).toEqual(['{"n":1}', '{"n":2}']);
  expect(receiver.connections).toBe(2);
});

it('a delivery to a public host goes through the filtering agent that keeps connections', () => {
  const url = 'https://hooks.example.com/slotfeed';
  const agent = deliveryAgent(url, { allowPrivate: false });
  expect(agent).toBe(sharedKeepAliveAgents(false).agentFor(new URL(url)));
  expect(agent.constructor.name).toBe('RequestFilteringHttpsAgent');
  expect((agent as unknown as { keepAlive: boolean }).keepAlive).toBe(true);
});
