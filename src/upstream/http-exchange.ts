import {
  upstreamErrorFromResponse,
  UpstreamError,
  UpstreamInvalidPayloadError,
  UpstreamUnavailableError,
} from './errors.js';
import { requestDeadline } from '../lib/request-deadline.js';

// One HTTP exchange with the service: timeout, bounded body, status → error class, call accounting. Shared
// by the API and the OAuth client so both fail in the same typed ways. No retries here: the retry policy
// (and the one refresh after a 401) belongs to the job layer.

/** Only an excerpt of an error body is kept, so there is no point reading megabytes of an HTML error page. */
const ERROR_BODY_BYTES = 16 * 1024;

export interface ExchangeSettings<E extends string = string> {
  fetch: typeof fetch;
  timeoutMs: number;
  now: () => Date;
  maxBodyBytes: number;
  /** Aborts in-flight calls (e.g. on shutdown); such an abort is rethrown as is, not as an UpstreamError. */
  signal?: AbortSignal | undefined;
  onCall?: ((endpoint: E, outcome: { status?: number; ms: number }) => void) | undefined;
}

export interface ExchangeRequest<E extends string = string> {
  endpoint: E;
  url: URL;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  redirect?: 'follow' | 'manual' | 'error';
  /** What this request carries that must never show up in an error message (token, code, secret). */
  secrets: readonly string[];
}

interface BoundedBody {
  bytes: Uint8Array;
  overflowed: boolean;
}

/** Reads at most `limit` bytes and cancels the rest of the stream, so a huge body costs no more than that. */
async function readBounded(response: Response, limit: number): Promise<BoundedBody> {
  const declared = Number(response.headers.get('content-length') ?? '');
  if (!response.body) return { bytes: new Uint8Array(), overflowed: false };
  if (Number.isFinite(declared) && declared > limit) {
    await response.body.cancel().catch(() => undefined);
    return { bytes: new Uint8Array(), overflowed: true };
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes: Buffer.concat(chunks), overflowed: false };
    if (size + value.byteLength > limit) {
      chunks.push(value.subarray(0, limit - size));
      await reader.cancel().catch(() => undefined);
      return { bytes: Buffer.concat(chunks), overflowed: true };
    }
    chunks.push(value);
    size += value.byteLength;
  }
}

async function errorBodyText(response: Response): Promise<string> {
  try {
    return new TextDecoder().decode((await readBounded(response, ERROR_BODY_BYTES)).bytes);
  } catch {
    // The status alone classifies the failure; a body that breaks off only costs us the excerpt.
    return '';
  }
}

// undici rejects with TypeError('fetch failed') and puts the system error (ECONNREFUSED, …) in `cause`.
// Read structurally, not with instanceof: fetch's errors come from Node's own realm, which is not the
// realm of a vm-sandboxed caller (jest), where `instanceof Error` is false for them.
function networkDetail(thrown: unknown): string {
  const cause = typeof thrown === 'object' && thrown !== null && 'cause' in thrown ? thrown.cause : undefined;
  if (typeof cause === 'object' && cause !== null && 'code' in cause && typeof cause.code === 'string') {
    return cause.code;
  }
  // Only the name: a message could quote the request, and with it a header.
  const name = typeof thrown === 'object' && thrown !== null && 'name' in thrown ? thrown.name : undefined;
  return typeof name === 'string' ? name : 'unknown error';
}

/**
 * Sends the request and returns the parsed JSON of a 2xx answer with its status. Throws an UpstreamError
 * for everything else: a non-2xx status, a timeout (which covers reading the body too), a network failure,
 * a body larger than maxBodyBytes or one that is not JSON.
 */
export async function exchangeJson<E extends string>(
  settings: ExchangeSettings<E>,
  request: ExchangeRequest<E>,
): Promise<{ status: number; json: unknown }> {
  const { endpoint } = request;
  const started = performance.now();
  // Covers reading the body too: it ends in `finally`, once the body is read or the exchange has failed.
  const deadline = requestDeadline(settings.timeoutMs, settings.signal);
  let status: number | undefined;
  try {
    const response = await settings.fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body ?? null,
      redirect: request.redirect ?? 'follow',
      signal: deadline.signal,
    });
    status = response.status;
    if (status < 200 || status > 299) {
      const bodyText = await errorBodyText(response);
      throw upstreamErrorFromResponse({
        endpoint,
        status,
        headers: response.headers,
        bodyText,
        now: settings.now(),
        secrets: request.secrets,
      });
    }
    const body = await readBounded(response, settings.maxBodyBytes);
    if (body.overflowed) {
      throw new UpstreamInvalidPayloadError({
        endpoint,
        status,
        path: '(body)',
        issue: `body larger than ${settings.maxBodyBytes} bytes`,
        retryable: false,
      });
    }
    try {
      return { status, json: JSON.parse(new TextDecoder().decode(body.bytes)) };
    } catch {
      // Retryable: a body that is not JSON on a 2xx is most often a response cut off on the way.
      throw new UpstreamInvalidPayloadError({
        endpoint,
        status,
        path: '(body)',
        issue: 'not valid JSON',
        retryable: true,
      });
    }
  } catch (e: unknown) {
    if (e instanceof UpstreamError) throw e;
    if (deadline.expired) {
      throw new UpstreamUnavailableError({
        endpoint,
        status,
        cause: 'timeout',
        detail: `no answer within ${settings.timeoutMs} ms`,
      });
    }
    if (settings.signal?.aborted) throw e;
    throw new UpstreamUnavailableError({ endpoint, status, cause: 'network', detail: networkDetail(e) });
  } finally {
    deadline.end();
    settings.onCall?.(endpoint, {
      ...(status === undefined ? {} : { status }),
      ms: performance.now() - started,
    });
  }
}
