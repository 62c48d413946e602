// The one door every CalDAV request goes through, tsdav's included (it takes this as its `fetch`): the target
// policy on the URL and on each redirect, the account's credentials, a time limit per request, and each failure
// as one of errors.ts's types. Whatever tsdav makes of an answer afterwards, a refusal has already been thrown here
// with its status, so a caller never sees tsdav's own untyped errors for them.
import {
  CalDavError,
  caldavErrorFor,
  CalDavRequestError,
  CalDavTargetError,
  CalDavTimeoutError,
  CalDavUnreachableError,
} from './errors.js';
import type { Fetch } from './http-transport.js';
import { requestDeadline } from '../lib/request-deadline.js';
import { checkedCalDavUrl, type TargetPolicy } from './target-policy.js';

export interface GuardSettings {
  /**
   * Sends one request. It answers once the body is read whole (http-transport.ts's does, bounded): the request's
   * time limit ends with the answer.
   */
  transport: Fetch;
  policy: TargetPolicy;
  /** The Authorization header's value, sent with every request. */
  authorization: string;
  /**
   * Where the credentials may go (target-policy.ts's credentialScope): a request or redirect anywhere else is
   * refused before it is sent, so the password never reaches another site.
   */
  mayCarryCredentials: (url: URL) => boolean;
  timeoutMs: number;
  /** The caller's abort (shutdown): passed on as it is, not as a CalDAV error. */
  signal?: AbortSignal | undefined;
  /** Waited for before each request (a host's rate limit), redirects included. */
  beforeRequest?: ((url: URL, signal?: AbortSignal) => Promise<void>) | undefined;
  now: () => Date;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 5;
/** Only the precondition's name is read from an error body. */
const ERROR_BODY_CHARS = 8192;
const USER_AGENT = 'slotfeed-caldav/1';

// node:http puts the system error's code (ECONNREFUSED) on the error, undici's fetch on its cause. Read
// structurally: errors from Node's own realm fail `instanceof Error` inside jest's VM context.
function networkCode(thrown: unknown): string | undefined {
  for (const candidate of [thrown, (thrown as { cause?: unknown } | undefined)?.cause]) {
    const code = (candidate as { code?: unknown } | undefined)?.code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

async function errorBody(response: Response): Promise<string> {
  try {
    return (await response.text()).slice(0, ERROR_BODY_CHARS);
  } catch {
    // The status alone classifies the failure.
    return '';
  }
}

/** Said when a URL lies outside the credentials' scope. */
export function anotherSite(url: URL): string {
  return (
    `${url.origin} is not the site of the server's address: slotfeed does not send the password there ` +
    '(give that server’s address itself to use it)'
  );
}

export function guardedFetch(settings: GuardSettings): Fetch {
  const { policy, timeoutMs } = settings;
  const inScope = (url: URL): URL => {
    if (!settings.mayCarryCredentials(url)) throw new CalDavTargetError(anotherSite(url));
    return url;
  };
  return async (input, init = {}) => {
    if (input instanceof Request) throw new TypeError('the CalDAV client fetches URLs, not Requests');
    let url = inScope(checkedCalDavUrl(String(input), policy));
    let method = (init.method ?? 'GET').toUpperCase();
    let body = init.body;
    const headers = new Headers(init.headers);
    headers.set('authorization', settings.authorization);
    headers.set('user-agent', USER_AGENT);
    for (let redirects = 0; ; redirects++) {
      settings.signal?.throwIfAborted();
      const request = { method, url: url.href };
      await settings.beforeRequest?.(url, settings.signal);
      // The time limit is the server's: it starts once the request may go, not while it waits its turn.
      const deadline = requestDeadline(timeoutMs, settings.signal);
      let response: Response;
      try {
        response = await settings.transport(url.href, {
          method,
          headers,
          body,
          redirect: 'manual',
          signal: deadline.signal,
        });
      } catch (thrown: unknown) {
        if (thrown instanceof CalDavError) throw thrown;
        if (settings.signal?.aborted) throw settings.signal.reason;
        if (deadline.expired) throw new CalDavTimeoutError(request, timeoutMs);
        const code = networkCode(thrown);
        // Without a system error's code it is no network failure but a fault of the transport: passed on as is.
        if (code === undefined) throw thrown;
        throw new CalDavUnreachableError(request, code);
      } finally {
        // The transport answers with the body read whole (GuardSettings.transport), so the request has ended.
        deadline.end();
      }
      const location = response.headers.get('location');
      // tsdav asks for 'manual' where a redirect is the answer (the /.well-known/caldav lookup).
      if (REDIRECTS.has(response.status) && location !== null && init.redirect !== 'manual') {
        await response.body?.cancel().catch(() => undefined);
        if (redirects >= MAX_REDIRECTS) {
          throw new CalDavRequestError(`${method} ${url.href} redirected more than ${MAX_REDIRECTS} times`, {
            request,
            status: response.status,
          });
        }
        // Only within the server's own site: a redirect elsewhere is refused, not followed without the password
        // (a CalDAV request without it is refused there anyway) nor with it.
        const next = inScope(checkedCalDavUrl(new URL(location, url).href, policy));
        if (response.status === 303 && method !== 'HEAD') {
          method = 'GET';
          body = undefined;
        }
        url = next;
        continue;
      }
      if (response.status >= 400) {
        const failed = {
          status: response.status,
          headers: response.headers,
          body: await errorBody(response),
        };
        throw caldavErrorFor(request, failed, settings.now());
      }
      return response;
    }
  };
}
