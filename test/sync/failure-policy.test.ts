import { describe, expect, it } from '@jest/globals';
import { LockLostError, LockTimeoutError } from '../../src/lib/redis-lock.js';
import { classifySyncFailure, nextSyncTime, retryDelayMs } from '../../src/sync/failure-policy.js';
import { NeedsReauthError } from '../../src/sync/token-refresh.js';
import {
  UpstreamAuthError,
  UpstreamBadRequestError,
  UpstreamInvalidPayloadError,
  UpstreamRateLimitedError,
  UpstreamUnavailableError,
} from '../../src/upstream/index.js';

describe('classifySyncFailure', () => {
  it('stops retrying when retrying cannot help', () => {
    expect(classifySyncFailure(new NeedsReauthError('c1', 'invalid_grant'))).toMatchObject({
      code: 'needs_reauth',
      permanent: true,
    });
    expect(
      classifySyncFailure(
        new UpstreamAuthError({ endpoint: 'POST /oauth2/token', status: 401, reason: 'invalid_client' }),
      ),
    ).toMatchObject({ code: 'auth', permanent: true });
    expect(
      classifySyncFailure(
        new UpstreamBadRequestError({
          endpoint: 'GET /calendars/{event_id}',
          status: 400,
          excerpt: undefined,
        }),
      ),
    ).toMatchObject({ code: 'bad_request', permanent: true });
  });

  it('retries passing faults, and hands a long rate limit back to the queue', () => {
    expect(
      classifySyncFailure(
        new UpstreamUnavailableError({ endpoint: 'GET /events', status: 503, cause: 'status' }),
      ),
    ).toMatchObject({ code: 'unavailable', permanent: false });
    expect(classifySyncFailure(new LockTimeoutError('k', 100))).toMatchObject({ permanent: false });
    expect(classifySyncFailure(new LockLostError('k'))).toMatchObject({
      code: 'lock_lost',
      permanent: false,
    });
    expect(
      classifySyncFailure(
        new UpstreamRateLimitedError({ endpoint: 'GET /events', status: 429, retryAfterMs: 90_000 }),
      ),
    ).toMatchObject({ code: 'rate_limited', permanent: false, rateLimitedMs: 90_000 });
    expect(
      classifySyncFailure(
        new UpstreamInvalidPayloadError({
          endpoint: 'GET /events',
          path: '[0].duration_minutes',
          issue: 'x',
          retryable: false,
        }),
      ),
    ).toMatchObject({ code: 'invalid_payload', permanent: false });
  });

  it('keeps secrets out of the stored message', () => {
    const verdict = classifySyncFailure(new Error('proxy said: Bearer abc.def.ghi is bad'));
    expect(verdict.message).not.toContain('abc.def.ghi');
  });
});

describe('retry and schedule timing', () => {
  it('backs off exponentially with jitter inside [half, full] of the step', () => {
    expect(retryDelayMs(1, 1000, () => 0)).toBe(500);
    expect(retryDelayMs(1, 1000, () => 1)).toBe(1000);
    expect(retryDelayMs(4, 1000, () => 0.5)).toBe(6000);
    expect(retryDelayMs(30, 1000, () => 1)).toBe(15 * 60_000);
  });

  it('spreads next syncs over ± the jitter ratio of the interval', () => {
    const now = new Date('2026-03-02T09:00:00Z');
    const spread = Array.from(
      { length: 200 },
      (_, i) => nextSyncTime(now, 900, 0.1, () => i / 199).getTime() - now.getTime(),
    );
    expect(Math.min(...spread)).toBe(810_000);
    expect(Math.max(...spread)).toBe(990_000);
    expect(new Set(spread).size).toBeGreaterThan(150);
  });
});
