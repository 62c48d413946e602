// One sync run's access to the scheduling service. Every call waits its turn at the shared rate limit and is
// counted per endpoint for the run row. Two protocol rules live here (docs/architecture.md, "Where the
// upstream's description is silent"): a 401 means refresh once and retry once, a second 401 is an auth failure; a 429 pauses every
// worker for its Retry-After and the call is tried again, without failing the job.
// A GET that fails transiently (5xx, timeout, network) is retried a few times with a short jittered backoff
// before the attempt gives up: a sync makes dozens of calls, and failing the whole attempt on any one of them
// would make a 30 % error rate unsyncable. The token endpoint is never retried here: a refresh that reached
// the server but whose answer was lost may have rotated the refresh token already.
import type { RateLimiter } from '../lib/redis-rate-limiter.js';
import type { Logger } from '../log.js';
import {
  UpstreamAuthError,
  UpstreamRateLimitedError,
  UpstreamUnavailableError,
  type ApiClient,
} from '../upstream/index.js';

export interface UpstreamSessionDeps {
  api: ApiClient;
  limiter: RateLimiter;
  /** Returns a usable access token; with `rejectedAccessToken`, one that is not that token. */
  accessToken(request?: { rejectedAccessToken?: string }): Promise<string>;
  logger: Logger;
  signal?: AbortSignal;
  /** 429s answered by waiting inside the job; a longer Retry-After, or more 429s, end the attempt. */
  maxRateLimitWaitMs?: number;
  maxRateLimitWaits?: number;
  /** Retries of a GET that failed transiently, before the attempt fails (default 3). */
  transientRetries?: number;
  transientBackoffMs?: number;
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export class SecondUnauthorizedError extends Error {
  readonly code = 'auth';
  constructor(endpoint: string) {
    super(`${endpoint} refused a freshly refreshed access token`);
    this.name = 'SecondUnauthorizedError';
  }
}

const DEFAULT_RETRY_AFTER_MS = 1000;
const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface UpstreamSession {
  call<T>(endpoint: string, request: (accessToken: string) => Promise<T>): Promise<T>;
}

export function createUpstreamSession(deps: UpstreamSessionDeps): UpstreamSession {
  const maxWaitMs = deps.maxRateLimitWaitMs ?? 30_000;
  const maxWaits = deps.maxRateLimitWaits ?? 10;
  let token: Promise<string> | undefined;
  // One in-process refresh at a time: concurrent calls that all got a 401 for the same token share it.
  const currentToken = () => (token ??= deps.accessToken());
  const replaceToken = (rejected: string) => {
    token = deps.accessToken({ rejectedAccessToken: rejected });
    return token;
  };

  const transientRetries = deps.transientRetries ?? 3;
  const backoffMs = deps.transientBackoffMs ?? 200;
  const random = deps.random ?? Math.random;
  const sleep = deps.sleep ?? defaultSleep;

  async function sendWithRetries<T>(endpoint: string, send: () => Promise<T>): Promise<T> {
    for (let waits = 0, failures = 0; ;) {
      await deps.limiter.acquire(deps.signal);
      try {
        return await send();
      } catch (error: unknown) {
        if (
          error instanceof UpstreamUnavailableError &&
          failures < transientRetries &&
          !deps.signal?.aborted
        ) {
          failures++;
          await sleep(backoffMs * 2 ** (failures - 1) * (0.5 + random() / 2));
          continue;
        }
        if (!(error instanceof UpstreamRateLimitedError)) throw error;
        waits++;
        const retryAfterMs = error.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
        if (retryAfterMs > maxWaitMs || waits > maxWaits) throw error;
        deps.logger.warn({ endpoint, retryAfterMs }, 'upstream rate limit hit; pausing all workers');
        await deps.limiter.pauseAll(retryAfterMs);
      }
    }
  }

  return {
    async call(endpoint, request) {
      const first = await currentToken();
      try {
        return await sendWithRetries(endpoint, () => request(first));
      } catch (error: unknown) {
        if (!(error instanceof UpstreamAuthError)) throw error;
        const latest = await currentToken();
        const refreshed = latest !== first ? latest : await replaceToken(first);
        try {
          return await sendWithRetries(endpoint, () => request(refreshed));
        } catch (second: unknown) {
          if (second instanceof UpstreamAuthError) throw new SecondUnauthorizedError(endpoint);
          throw second;
        }
      }
    },
  };
}
