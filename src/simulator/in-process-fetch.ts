// A fetch that answers from the simulator's own fastify app in this process (fastify's inject, no socket). The
// demo's history makes some 5,000 upstream calls in seconds; over loopback HTTP, the client's and the server's
// sockets and streams were about a fifth of its CPU. The request and the answer are the ones HTTP would carry:
// method, path and query, headers, body, status, headers and body back. Redirects are returned, not followed.
import type { InjectOptions, LightMyRequestResponse } from 'fastify';

/** Statuses a Response must have no body for (the Fetch standard's null body statuses a Response can have). */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

type Inject = (options: InjectOptions) => Promise<LightMyRequestResponse>;

/** The answer, or the signal's reason once it aborts; the listener goes with the answer, as a fetch's does. */
async function answerUnlessAborted<T>(answering: Promise<T>, signal: AbortSignal): Promise<T> {
  let stopListening = () => undefined as void;
  const aborted = new Promise<never>((_resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    stopListening = () => signal.removeEventListener('abort', abort);
  });
  try {
    return await Promise.race([answering, aborted]);
  } finally {
    stopListening();
  }
}

function requestBody(body: RequestInit['body']): string | Buffer | undefined {
  if (body === null || body === undefined) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return Buffer.from(body as ArrayBuffer);
  throw new TypeError('the simulator in process takes a string, form or byte body only');
}

/** A fetch of `origin`'s URLs (the simulator's own), answered by `inject`; any other URL is refused. */
export function inProcessFetch(inject: Inject, origin: string): typeof fetch {
  return async (input, init = {}) => {
    if (input instanceof Request) throw new TypeError('the simulator in process takes a URL and options');
    const url = new URL(String(input));
    if (url.origin !== origin) {
      throw new TypeError(`the simulator in process answers ${origin} only, not ${url.origin}`);
    }
    init.signal?.throwIfAborted();
    const answering = inject({
      method: (init.method ?? 'GET') as InjectOptions['method'],
      url: url.pathname + url.search,
      headers: Object.fromEntries(new Headers(init.headers)),
      payload: requestBody(init.body),
    });
    // A timeout or a shutdown ends the wait as it ends a fetch's; the simulator's handler finishes on its own.
    const answer = await (init.signal ? answerUnlessAborted(answering, init.signal) : answering);
    const headers = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (Array.isArray(value)) value.forEach((one) => headers.append(name, one));
      else if (value !== undefined) headers.set(name, String(value));
    }
    const body = NULL_BODY_STATUSES.has(answer.statusCode) ? null : answer.rawPayload;
    return new Response(body, { status: answer.statusCode, headers });
  };
}
