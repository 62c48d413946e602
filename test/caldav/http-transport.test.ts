// The CalDAV transport's connections (issue 43): a push is a few requests and a worker pushes many calendars on one
// server, so requests to a server share a kept connection, through the private-address filter too, where each
// used to open its own (and, over https, pay a TLS handshake). A kept connection the server closed while idle
// fails the next request sent on it: a request HTTP lets one repeat is sent again on a new connection, and one it
// does not (MKCALENDAR) fails as it did, never made twice. Against a real node:http server on loopback.
import { afterEach, expect, it } from '@jest/globals';
import { createKeepAliveAgents } from '../../src/lib/keep-alive-agents.js';
import { nodeHttpTransport } from '../../src/caldav/http-transport.js';
import { startKeptConnectionServer, type KeptConnectionServer } from '../support/kept-connection-server.js';

const servers: KeptConnectionServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function startServer(): Promise<KeptConnectionServer> {
  const server = await startKeptConnectionServer('/dav/', (method) => (method === 'MKCALENDAR' ? 201 : 207));
  servers.push(server);
  return server;
}
const methodsOf = (server: KeptConnectionServer) => server.requests.map((request) => request.method);

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
  expect(methodsOf(server)).toEqual(['PROPFIND', 'PUT', 'DELETE']);
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
  expect(methodsOf(server)).toEqual(['PROPFIND', 'PUT']);
  expect(server.connections).toBe(2);
});

it('a request HTTP does not let one repeat fails as it did: never made twice', async () => {
  const server = await startServer();
  const transport = filteredTransport();
  await (await transport(server.url, { method: 'PROPFIND' })).text();
  server.dropNextOnKeptConnection = true;
  await expect(transport(server.url, { method: 'MKCALENDAR' })).rejects.toMatchObject({ code: 'ECONNRESET' });
  expect(methodsOf(server)).toEqual(['PROPFIND']);
});
