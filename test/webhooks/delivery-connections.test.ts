// A webhook endpoint gets every event of an installation, so deliveries to it share a kept connection (issue 43:
// before, a delivery through the private-address filter opened a connection, and over https a TLS handshake,
// each time). A delivery sent on a kept connection the receiver had closed meanwhile is sent again at once on a
// new one, rather than failing an attempt and waiting out a retry; a receiver that answers is never posted twice.
// Against a real node:http receiver on loopback.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from '@jest/globals';
import { sharedKeepAliveAgents } from '../../src/lib/keep-alive-agents.js';
import { deliveryAgent } from '../../src/webhooks/target-policy.js';
import { postDelivery, type WebhookDeliverySettings } from '../../src/webhooks/webhook-delivery.js';

const settings: WebhookDeliverySettings = {
  timeoutMs: 10_000,
  allowPrivateTargets: true,
  disableAfterSeconds: 86_400,
};
const headers = { 'content-type': 'application/json', 'webhook-id': 'msg_test' };

interface Receiver {
  url: string;
  connections: number;
  bodies: string[];
  /** Drops the next delivery that comes on a connection it answered on before, as a receiver closing it would. */
  dropNextOnKeptConnection: boolean;
  close(): Promise<void>;
}

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

async function startReceiver(): Promise<Receiver> {
  const answeredOn = new WeakSet<object>();
  const server = http.createServer((request, response) => {
    if (state.dropNextOnKeptConnection && answeredOn.has(request.socket)) {
      state.dropNextOnKeptConnection = false;
      request.socket.destroy();
      return;
    }
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk));
    request.on('end', () => {
      state.bodies.push(body);
      answeredOn.add(request.socket);
      response.writeHead(204);
      response.end();
    });
  });
  const state: Receiver = {
    url: '',
    connections: 0,
    bodies: [],
    dropNextOnKeptConnection: false,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  server.on('connection', () => (state.connections += 1));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receivers.push(state);
  return state;
}

it('deliveries to one endpoint share a kept connection', async () => {
  const receiver = await startReceiver();
  for (const n of [1, 2, 3]) {
    expect(await postDelivery(receiver.url, `{"n":${n}}`, headers, settings)).toEqual({ status: 204 });
  }
  expect(receiver.bodies).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
  expect(receiver.connections).toBe(1);
});

it('a delivery on a kept connection the receiver closed is sent again at once, on a new one', async () => {
  const receiver = await startReceiver();
  expect(await postDelivery(receiver.url, '{"n":1}', headers, settings)).toEqual({ status: 204 });
  receiver.dropNextOnKeptConnection = true;
  expect(await postDelivery(receiver.url, '{"n":2}', headers, settings)).toEqual({ status: 204 });
  expect(receiver.bodies).toEqual(['{"n":1}', '{"n":2}']);
  expect(receiver.connections).toBe(2);
});

it('a delivery to a public host goes through the filtering agent that keeps connections', () => {
  const url = 'https://hooks.example.com/slotfeed';
  const agent = deliveryAgent(url, { allowPrivate: false });
  expect(agent).toBe(sharedKeepAliveAgents(false).agentFor(new URL(url)));
  expect(agent.constructor.name).toBe('RequestFilteringHttpsAgent');
  expect((agent as unknown as { keepAlive: boolean }).keepAlive).toBe(true);
});
