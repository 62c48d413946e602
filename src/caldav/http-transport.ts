// The CalDAV client's HTTP transport: a fetch-shaped function over node:http(s), so a request can go through
// request-filtering-agent, which refuses a private address after DNS (a public name that resolves into slotfeed's
// own network). Node's global fetch takes no agent. It follows no redirect (guarded-fetch.ts follows them, checking
// each target), and reads at most `maxBodyBytes` of a body.
import http from 'node:http';
import https from 'node:https';
import { useAgent } from 'request-filtering-agent';
import { CalDavRequestError, CalDavTargetError } from './errors.js';
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

export function nodeHttpTransport(options: { allowPrivateTargets: boolean; maxBodyBytes: number }): Fetch {
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      if (input instanceof Request) throw new TypeError('the CalDAV transport takes a URL, not a Request');
      const url = new URL(input);
      const method = init.method ?? 'GET';
      if (init.body !== undefined && init.body !== null && typeof init.body !== 'string') {
        throw new TypeError('the CalDAV transport sends text bodies only');
      }
      const body = init.body ?? undefined;
      const headers: Record<string, string> = Object.fromEntries(new Headers(init.headers).entries());
      if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
      const agent = options.allowPrivateTargets ? undefined : useAgent(url.href);
      const client = url.protocol === 'https:' ? https : http;
      const request = client.request(
        url,
        { method, headers, ...(agent ? { agent } : {}), ...(init.signal ? { signal: init.signal } : {}) },
        (message) => {
          const chunks: Buffer[] = [];
          let size = 0;
          message.on('data', (chunk: Buffer) => {
            size += chunk.byteLength;
            if (size > options.maxBodyBytes) {
              message.destroy();
              reject(
                new CalDavRequestError(
                  `${method} ${url.href} answered with more than ${options.maxBodyBytes} bytes`,
                  { request: { method, url: url.href }, status: message.statusCode },
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
      request.end(body);
    });
}
