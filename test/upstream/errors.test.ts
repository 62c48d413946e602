import { describe, expect, it } from '@jest/globals';
import {
  upstreamErrorFromResponse,
  UpstreamAuthError,
  UpstreamBadRequestError,
  UpstreamNotFoundError,
  UpstreamRateLimitedError,
  UpstreamUnavailableError,
} from '../../src/upstream/errors.js';
import type { UpstreamError } from '../../src/upstream/errors.js';

const NOW = new Date('2026-03-02T09:00:00Z');

function failure(status: number, bodyText = '', headers: Record<string, string> = {}, secrets?: string[]) {
  return upstreamErrorFromResponse({
    endpoint: 'GET /events',
    status,
    headers: new Headers(headers),
    bodyText,
    now: NOW,
    ...(secrets ? { secrets } : {}),
  });
}

describe('upstreamErrorFromResponse: status → class', () => {
  it.each<[number, new (...args: never[]) => UpstreamError, string, boolean]>([
    [401, UpstreamAuthError, 'auth', false],
    [429, UpstreamRateLimitedError, 'rate_limited', true],
    [400, UpstreamBadRequestError, 'bad_request', false],
    [403, UpstreamBadRequestError, 'bad_request', false],
    [405, UpstreamBadRequestError, 'bad_request', false],
    [409, UpstreamBadRequestError, 'bad_request', false],
    [422, UpstreamBadRequestError, 'bad_request', false],
    [404, UpstreamNotFoundError, 'not_found', false],
    [408, UpstreamUnavailableError, 'unavailable', true],
    [500, UpstreamUnavailableError, 'unavailable', true],
    [502, UpstreamUnavailableError, 'unavailable', true],
    [503, UpstreamUnavailableError, 'unavailable', true],
    [504, UpstreamUnavailableError, 'unavailable', true],
    [302, UpstreamUnavailableError, 'unavailable', true],
  ])('%i → %p', (status, cls, code, retryable) => {
    const error = failure(status);
    expect(error).toBeInstanceOf(cls);
    expect(error.code).toBe(code);
    expect(error.status).toBe(status);
    expect(error.endpoint).toBe('GET /events');
    expect(error.retryable).toBe(retryable);
    expect(error.name).toBe(cls.name);
  });

  it('a bare 401 is reason unauthorized; a Bearer challenge names the reason', () => {
    expect((failure(401) as UpstreamAuthError).reason).toBe('unauthorized');
    const challenged = failure(401, '', { 'www-authenticate': 'Bearer realm="api", error="invalid_token"' });
    expect((challenged as UpstreamAuthError).reason).toBe('invalid_token');
    const scope = failure(403, '', { 'www-authenticate': 'Bearer error="insufficient_scope"' });
    expect(scope).toBeInstanceOf(UpstreamAuthError);
    expect((scope as UpstreamAuthError).reason).toBe('insufficient_scope');
  });

  it.each(['invalid_grant', 'invalid_client', 'unauthorized_client'])(
    'OAuth error %s in a 400 body is auth, not bad_request',
    (code) => {
      const error = failure(400, JSON.stringify({ error: code, error_description: 'nope' }));
      expect(error).toBeInstanceOf(UpstreamAuthError);
      expect((error as UpstreamAuthError).reason).toBe(code);
    },
  );

  it('a 5xx stays unavailable even with an OAuth error body', () => {
    expect(failure(503, '{"error":"invalid_grant"}')).toBeInstanceOf(UpstreamUnavailableError);
  });

  it('OAuth invalid_request stays bad_request', () => {
    expect(failure(400, '{"error":"invalid_request"}')).toBeInstanceOf(UpstreamBadRequestError);
  });

  it('429 carries retryAfterMs from either Retry-After form', () => {
    expect((failure(429, '', { 'retry-after': '2' }) as UpstreamRateLimitedError).retryAfterMs).toBe(2000);
    const dated = failure(429, '', { 'retry-after': 'Mon, 02 Mar 2026 09:00:07 GMT' });
    expect((dated as UpstreamRateLimitedError).retryAfterMs).toBe(7000);
    expect((failure(429) as UpstreamRateLimitedError).retryAfterMs).toBeUndefined();
  });

  it('a 503 with Retry-After keeps it', () => {
    const error = failure(503, '', { 'retry-after': '10' }) as UpstreamUnavailableError;
    expect(error.cause).toBe('status');
    expect(error.retryAfterMs).toBe(10_000);
  });
});

describe('error body excerpts', () => {
  it('uses the error fields of a JSON body', () => {
    const error = failure(
      400,
      JSON.stringify({ error: 'invalid_period', message: 'period must be below 2 months' }),
    );
    expect((error as UpstreamBadRequestError).excerpt).toBe('invalid_period: period must be below 2 months');
    expect(error.message).toBe('GET /events answered 400: invalid_period: period must be below 2 months');
  });

  it('keeps a plain-text body, tags stripped and whitespace collapsed', () => {
    const error = failure(
      400,
      '<html><body><h1>Bad   Request</h1>\n<p>start_date is required</p></body></html>',
    );
    expect((error as UpstreamBadRequestError).excerpt).toBe('Bad Request start_date is required');
  });

  it('is at most 200 characters', () => {
    const excerpt = (failure(400, 'word '.repeat(500)) as UpstreamBadRequestError).excerpt ?? '';
    expect(excerpt.length).toBeLessThanOrEqual(200);
    expect(excerpt.endsWith('…')).toBe(true);
  });

  it('never repeats a secret, a JWT or a token-shaped value', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEifQ.c2lnbmF0dXJl';
    const body = [
      'code abcd1234 was already used;',
      `token ${jwt};`,
      'refresh_token=rt-9f8e7d6c5b4a',
      'Authorization: Bearer opaque-value-123',
      'opaque QWxhZGRpbjpvcGVuIHNlc2FtZQQWxhZGRpbjpvcGVuIHNlc2FtZQ',
    ].join(' ');
    const error = failure(400, body, {}, ['abcd1234']) as UpstreamBadRequestError;
    for (const secret of ['abcd1234', jwt, 'rt-9f8e7d6c5b4a', 'opaque-value-123', 'QWxhZGRpbjpvcGVu']) {
      expect(error.message).not.toContain(secret);
      expect(error.excerpt).not.toContain(secret);
    }
    expect(error.excerpt).toContain('[redacted]');
  });

  it('has no excerpt for an empty body', () => {
    const error = failure(400, '   ') as UpstreamBadRequestError;
    expect(error.excerpt).toBeUndefined();
    expect(error.message).toBe('GET /events answered 400');
  });
});
