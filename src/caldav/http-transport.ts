// The CalDAV client's HTTP transport: a fetch-shaped function over node:http(s), so a request can go through
// request-filtering-agent, which refuses a private address after DNS (a public name that resolves into slotfeed's
// own network). Node's global fetch takes no agent. It follows no redirect (guarded-fetch.ts follows them, checking
// each target), and reads at most `maxBodyBytes` of a body.
//
// Connections are kept open between requests (lib/keep-alive-agents.ts). A kept connection the server closed while it
// sat idle fails the next request sent on it at once (a reset, or the socket hanging up before any answer); such a
// request never reached the server, so it is sent again on another connection, for the methods HTTP makes safe to
// repeat. A failure on a new connection is the server's, and is the caller's to see.
import http from 'node:http';
import https from 'node:https';
import { CalDavRequestError, CalDavTargetError } from './errors.js';
import {
  closedWhileKept,
  sharedKeepAliveAgents,
  STALE_CONNECTION_RETRIES,
  type KeepAliveAgents,
} from '../lib/keep-alive-agents.js';
import { PRIVATE_CALDAV_TARGET_REFUSED } from './target-policy.js';

export type Fetch = typeof fetch;

// request-filtering-agent refuses with an Error whose message starts so ("DNS lookup 127.0.0.1(family:4, host:x)
// is not allowed. Because, It is private IP address."): it has no code to test.
const FILTERED = /^DNS lookup .* is not allowed/;

// Statuses whose response has no body: the Response constructor refuses one for them.
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

function headersOf(message: http.IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(message.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return headers;
}

/** Methods a request of which may be sent again (RFC 9110: safe or idempotent; MKCALENDAR and POST are not). */
const REPEATABLE = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'PROPFIND', 'REPORT']);

interface Outgoing {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  signal: AbortSignal | undefined;
  agent: http.Agent;
  maxBodyBytes: number;
}

interface Sent {
  answer: Promise<Response>;
  /** Failed on a kept connection before any answer began: the server had closed it, and never saw the request. */
  onClosedConnection(error: unknown): boolean;
}

function sendOnce(out: Outgoing): Sent {
  const { url, method } = out;
  const client = url.protocol === 'https:' ? https : http;
  let request!: http.ClientRequest;
  let answering = false;
  const answer = new Promise<Response>((resolve, reject) => {
    request = client.request(
      url,
      { method, headers: out.headers, agent: out.agent, ...(out.signal ? { signal: out.signal } : {}) },
      (message) => {
        answering = true;
        const chunks: Buffer[] = [];
        let size = 0;
        message.on('data', (chunk: Buffer) => {
          size += chunk.byteLength;
          if (size > out.maxBodyBytes) {
            message.destroy();
            reject(
              new CalDavRequestError(
                `${method} ${url.href} answered with more than ${out.maxBodyBytes} bytes`,
                {
                  request: { method, url: url.href },
                  status: message.statusCode,
                },
              ),
            );
            return;
          }
          chunks.push(chunk);
        });
        message.on('error', reject);
        message.on('end', () => {
          const status = message.statusCode ?? 0;
          try {
            resolve(
              new Response(NULL_BODY_STATUSES.has(status) ? null : Buffer.concat(chunks), {
                status,
                statusText: message.statusMessage ?? '',
                headers: headersOf(message),
              }),
            );
          } catch {
            // The Response constructor refuses a status outside 200-599: not an HTTP answer we can read.
            reject(
              new CalDavRequestError(`${method} ${url.href} answered with status ${status}`, {
                request: { method, url: url.href },
                status,
              }),
            );
          }
        });
      },
    );
    request.on('error', (error: Error) => {
      reject(
        FILTERED.test(error.message)
          ? new CalDavTargetError(
              `${url.host}: ${PRIVATE_CALDAV_TARGET_REFUSED} (${url.hostname} resolves to one)`,
            )
          : error,
      );
    });
    request.end(out.body);
  });
  return {
    answer,
    onClosedConnection: (error) => closedWhileKept(request, answering, error),
  };
}

export function nodeHttpTransport(options: {
  allowPrivateTargets: boolean;
  maxBodyBytes: number;
  /** The connections' agents (default: the process's shared ones for the policy). */
  agents?: KeepAliveAgents;
}): Fetch {
  const agents = options.agents ?? sharedKeepAliveAgents(options.allowPrivateTargets);
  return async (input, init = {}) => {
    if (input instanceof Request) throw new TypeError('the CalDAV transport takes a URL, not a Request');
    const url = new URL(input);
    const method = init.method ?? 'GET';
    if (init.body !== undefined && init.body !== null && typeof init.body !== 'string') {
      throw new TypeError('the CalDAV transport sends text bodies only');
    }
    const body = init.body ?? undefined;
    const headers: Record<string, string> = Object.fromEntries(new Headers(init.headers).entries());
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const out: Outgoing = {
      url,
      method,
      headers,
      body,
      signal: init.signal ?? undefined,
      agent: agents.agentFor(url),
      maxBodyBytes: options.maxBodyBytes,
    };
    for (let retries = 0; ; retries++) {
      const sent = sendOnce(out);
      try {
        return await sent.answer;
      } catch (error: unknown) {
        const again =
          retries < STALE_CONNECTION_RETRIES &&
          REPEATABLE.has(method.toUpperCase()) &&
          !out.signal?.aborted &&
          sent.onClosedConnection(error);
        if (!again) throw error;
      }
    }
  };
}
