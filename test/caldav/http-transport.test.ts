// The CalDAV transport's connections (issue 43): a push is a few requests and a worker pushes many calendars on one
// server, so requests to a server share a kept connection, through the private-address filter too, where each
// used to open its own (and, over https, pay a TLS handshake). A kept connection the server closed while idle
// fails the next request sent on it: a request HTTP lets one repeat is sent again on a new connection, and one it
// does not (MKCALENDAR) fails as it did, never made twice. Against a real node:http server on loopback.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from '@jest/globals';
import { createKeepAliveAgents } from '../../src/lib/keep-alive-agents.js';
import { nodeHttpTransport } from '../../src/caldav/http-transport.js';

interface TestServer {
  url: string;
  connections: number;
  requests: string[];
  /** Requests after which the server drops the connection instead of answering the next one sent on it. */
  dropNextOnKeptConnection: boolean;
  close(): Promise<void>;
}

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function startServer(): Promise<TestServer> {
  const answeredOn = new WeakSet<object>();
  const state: TestServer = {
    url: '',
    connections: 0,
    requests: [],
    dropNextOnKeptConnection: false,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  const server = http.createServer((request, response) => {
    // As a server that closed the idle connection: the request sent on it gets no answer.
    if (state.dropNextOnKeptConnection && answeredOn.has(request.socket)) {
      state.dropNextOnKeptConnection = false;
      request.socket.destroy();
      return;
    }
    state.requests.push(request.method!);
    request.resume();
    request.on('end', () => {
      answeredOn.add(request.socket);
      response.writeHead(request.method === 'MKCALENDAR' ? 201 : 207, { 'content-type': 'text/plain' });
      response.end('ok');
    });
  });
  server.on('connection', () => (state.connections += 1));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/dav/`;
  servers.push(state);
  return state;
}

/** The transport as production makes it (private addresses refused), with this test's loopback allowed. */
const filteredTransport = () =>
  nodeHttpTransport({
    allowPrivateTargets: false,
    maxBodyBytes: 1 << 20,
    agents: createKeepAliveAgents({
      allowPrivateTargets: false,
      filter: { allowIPAddressList: ['127.0.0.1'] },
    }),
  });

it('requests to one server share a kept connection, through the private-address filter', async () => {
  const server = await startServer();
  const transport = filteredTransport();
  for (const method of ['PROPFIND', 'PUT', 'DELETE']) {
    const answer = await transport(server.url, {
      method,
      body: method === 'PUT' ? 'BEGIN:VCALENDAR' : undefined,
    });
    expect(await answer.text()).toBe('ok');
  }
  expect(server.requests).toEqual(['PROPFIND', 'PUT', 'DELETE']);
  expect(server.connections).toBe(1);
  // The filter still refuses a private address it was not told to allow.
  await expect(
    transport(server.url.replace('127.0.0.1', '127.0.0.2'), { method: 'PROPFIND' }),
  ).rejects.toThrow(/private/i);
});

it('a request on a kept connection the server closed is sent again on a new one', async () => {
  const server = await startServer();
  const transport = filteredTransport();
  await (await transport(server.url, { method: 'PROPFIND' })).text();
  server.dropNextOnKeptConnection = true;
  const answer = await transport(server.url, { method: 'PUT', body: 'BEGIN:VCALENDAR' });
  expect(answer.status).toBe(207);
  expect(server.requests).toEqual(['PROPFIND', 'PUT']);
  expect(server.connections).toBe(2);
});

it('a request HTTP does not let one repeat fails as it did: never made twice', async () => {
  const server = await startServer();
  const transport = filteredTransport();
  await (await transport(server.url, { method: 'PROPFIND' })).text();
  server.dropNextOnKeptConnection = true;
  await expect(transport(server.url, { method: 'MKCALENDAR' })).rejects.toMatchObject({ code: 'ECONNRESET' });
  expect(server.requests).toEqual(['PROPFIND']);
});
