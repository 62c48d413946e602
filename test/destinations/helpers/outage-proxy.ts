// An HTTP proxy in front of a real CalDAV server, for the outage test: it forwards every request as it is, and can
// be told to let the server take the n-th PUT from now, then stop the server and drop that PUT's answer. slotfeed
// sees the worst case of a server stopped mid-push: an event written that it never heard was written, and every
// request after it refused. While the server is stopped, a request gets its connection closed, as a stopped
// server's would.
import http from 'node:http';
import type net from 'node:net';

export interface OutageProxy {
  /** The proxy's root: give it as the server's address. */
  url: string;
  /**
   * The n-th PUT from now reaches the server and is answered there; then `stop` runs and that answer is dropped.
   * Resolves once the server has stopped.
   */
  stopAfterPut(n: number, stop: () => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

export async function startOutageProxy(targetUrl: string): Promise<OutageProxy> {
  const target = new URL(targetUrl);
  let plan: { left: number; stop: () => Promise<void>; stopped: () => void } | undefined;
  const sockets = new Set<net.Socket>();

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const upstream = http.request(
        {
          host: target.hostname,
          port: target.port,
          method: request.method,
          path: request.url,
          headers: request.headers,
        },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => body.push(chunk));
          answer.on('end', () => {
            if (request.method === 'PUT' && plan !== undefined && --plan.left === 0) {
              const { stop, stopped } = plan;
              plan = undefined;
              void stop().then(() => {
                request.socket.destroy();
                stopped();
              });
              return;
            }
            response.writeHead(answer.statusCode ?? 502, answer.headers);
            response.end(Buffer.concat(body));
          });
        },
      );
      upstream.on('error', () => request.socket.destroy());
      upstream.end(Buffer.concat(chunks));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    stopAfterPut: (n, stop) =>
      new Promise<void>((stopped) => {
        plan = { left: n, stop, stopped };
      }),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
