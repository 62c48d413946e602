// A plain node:http server on loopback for the tests of slotfeed's kept connections (CalDAV requests, webhook
// deliveries): it counts the connections it is opened on and keeps each request it answers, and can drop the next
// request that comes on a connection it has answered on before, as a server that closed that connection while it
// sat idle would (the request never reaches it, and no answer comes).
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface KeptConnectionServer {
  url: string;
  /** Connections opened to it. */
  connections: number;
  /** The requests it answered, in order. */
  requests: { method: string; body: string }[];
  /** Drop the next request that comes on a connection answered on before. */
  dropNextOnKeptConnection: boolean;
  close(): Promise<void>;
}

/** Starts one at `path`, answering each request with `statusFor(method)` and a short body. */
export async function startKeptConnectionServer(
  path: string,
  statusFor: (method: string) => number,
): Promise<KeptConnectionServer> {
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
      state.requests.push({ method: request.method!, body });
      answeredOn.add(request.socket);
      response.writeHead(statusFor(request.method!), { 'content-type': 'text/plain' });
      response.end('ok');
    });
  });
  const state: KeptConnectionServer = {
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
  server.on('connection', () => (state.connections += 1));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return state;
}
