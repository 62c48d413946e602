// A fault-injecting HTTP proxy of the tests' own in front of a real CalDAV server (Radicale, Xandikos): each
// request is forwarded as it is unless a fault the test installed says otherwise. A fault sees the request
// (method, path, headers, body) and answers for the server, rewrites what goes there or what comes back, holds the
// request until the test lets it go, or forwards it and then cuts the connection without an answer (was it
// written?). Every request is counted, so a test can bound how many reached the server while it was failing.
import http from 'node:http';
import type net from 'node:net';

export interface ProxiedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface ServerAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export type FaultAction =
  | { kind: 'forward' }
  /** Answer for the server; it never sees the request. */
  | { kind: 'answer'; status: number; headers?: Record<string, string>; body?: string }
  /** Forward, then close the connection without passing the answer on. */
  | { kind: 'cut-after-forward' }
  /** Close the connection without forwarding or answering, after `afterMs` (a timeout, as the client sees it). */
  | { kind: 'hang' }
  /** Forward once `until` resolves. */
  | { kind: 'hold'; until: Promise<void> }
  /** Forward the request as rewritten. */
  | { kind: 'rewrite-request'; rewrite: (request: ProxiedRequest) => ProxiedRequest }
  /** Forward, and pass on the server's answer as rewritten. */
  | { kind: 'rewrite-answer'; rewrite: (answer: ServerAnswer, request: ProxiedRequest) => ServerAnswer };

export type Fault = (request: ProxiedRequest) => FaultAction | undefined;

export interface FaultProxy {
  /** The proxy's root: give it in place of the server's. */
  url: string;
  /** Faults are asked in the order installed; the first to return an action decides. Returns its removal. */
  install(fault: Fault): () => void;
  clear(): void;
  /** Requests received since the last reset, as `METHOD path`. */
  requests(): string[];
  /** The most requests it had under way at once (received, not yet answered) since the last reset. */
  mostAtOnce(): number;
  resetCount(): void;
  close(): Promise<void>;
}

/** A proxy whose paths stay the server's: the URL it gives is the server's with the proxy's host and port. */
export async function startFaultProxy(targetUrl: string): Promise<FaultProxy> {
  const target = new URL(targetUrl);
  let faults: Fault[] = [];
  let seen: string[] = [];
  let underWay = 0;
  let most = 0;
  const sockets = new Set<net.Socket>();

  const forward = (request: ProxiedRequest): Promise<ServerAnswer> =>
    new Promise((resolve, reject) => {
      const upstream = http.request(
        {
          host: target.hostname,
          port: target.port,
          method: request.method,
          path: request.path,
          headers: {
            ...request.headers,
            host: target.host,
            'content-length': String(request.body.length),
            // Plain bodies, so that a fault can read and rewrite an answer.
            'accept-encoding': 'identity',
          },
        },
        (answer) => {
          const body: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => body.push(chunk));
          answer.on('end', () =>
            resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(body) }),
          );
          answer.on('error', reject);
        },
      );
      upstream.on('error', reject);
      upstream.end(request.body);
    });

  const send = (response: http.ServerResponse, answer: ServerAnswer) => {
    const headers = { ...answer.headers };
    delete headers['transfer-encoding'];
    headers['content-length'] = String(answer.body.length);
    response.writeHead(answer.status, headers);
    response.end(answer.body);
  };

  const server = http.createServer((incoming, response) => {
    underWay += 1;
    most = Math.max(most, underWay);
    response.on('close', () => {
      underWay -= 1;
    });
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const request: ProxiedRequest = {
        method: incoming.method ?? 'GET',
        path: incoming.url ?? '/',
        headers: incoming.headers,
        body: Buffer.concat(chunks),
      };
      seen.push(`${request.method} ${request.path}`);
      let action: FaultAction = { kind: 'forward' };
      for (const fault of faults) {
        const decided = fault(request);
        if (decided) {
          action = decided;
          break;
        }
      }
      void (async () => {
        try {
          switch (action.kind) {
            case 'answer':
              send(response, {
                status: action.status,
                headers: { 'content-type': 'text/plain', ...(action.headers ?? {}) },
                body: Buffer.from(action.body ?? ''),
              });
              return;
            case 'cut-after-forward':
              await forward(request);
              incoming.socket.destroy();
              return;
            case 'hang':
              // Never answered; the client's own time limit ends it, and the socket goes with the proxy.
              return;
            case 'hold':
              await action.until;
              send(response, await forward(request));
              return;
            case 'rewrite-request':
              send(response, await forward(action.rewrite(request)));
              return;
            case 'rewrite-answer':
              send(response, action.rewrite(await forward(request), request));
              return;
            default:
              send(response, await forward(request));
          }
        } catch {
          incoming.socket.destroy();
        }
      })();
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
    install(fault) {
      faults.push(fault);
      return () => {
        faults = faults.filter((f) => f !== fault);
      };
    },
    clear() {
      faults = [];
    },
    requests: () => [...seen],
    mostAtOnce: () => most,
    resetCount() {
      seen = [];
      most = underWay;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
