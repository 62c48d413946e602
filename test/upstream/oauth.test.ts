import { describe, expect, it } from '@jest/globals';
import { UpstreamAuthError, UpstreamInvalidPayloadError } from '../../src/upstream/errors.js';
import { createOAuthClient, pkceChallengeOf } from '../../src/upstream/oauth.js';
import type { OAuthClientOptions } from '../../src/upstream/oauth.js';
import { upstreamFailure } from '../support/upstream-failure.js';

// Request shapes with fetch injected; the real flow against the simulator is in oauth-simulator.test.ts.

const NOW = new Date('2026-03-02T09:00:00Z');

interface TokenCall {
  url: string;
  headers: Headers;
  form: URLSearchParams;
  redirect: RequestInit['redirect'];
}

function tokenServer(reply: () => Response) {
  const calls: TokenCall[] = [];
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    calls.push({
      url: String(input),
      headers: new Headers(init?.headers),
      form: new URLSearchParams(String(init?.body)),
      redirect: init?.redirect,
    });
    return reply();
  }) as typeof fetch;
  return { fetchFn, calls };
}

function oauth(fetchFn: typeof fetch, extra: Partial<OAuthClientOptions> = {}) {
  return createOAuthClient({
    authUrl: 'https://auth.example.test/auth/',
    clientId: 'client 1',
    clientSecret: 's3cret:+&',
    redirectUri: 'https://slotfeed.example/oauth/callback',
    timeoutMs: 1000,
    fetch: fetchFn,
    now: () => NOW,
    ...extra,
  });
}

const tokens =
  (body: Record<string, unknown>, status = 200) =>
  () =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('buildAuthorizationRequest', () => {
  it('builds the /login URL with state and an S256 PKCE challenge', () => {
    const { fetchFn } = tokenServer(tokens({}));
    const request = oauth(fetchFn, { scope: 'read' }).buildAuthorizationRequest({
      loginHint: 'ada@example.test',
    });
    const url = new URL(request.url);
    expect(`${url.origin}${url.pathname}`).toBe('https://auth.example.test/auth/login');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: 'client 1',
      redirect_uri: 'https://slotfeed.example/oauth/callback',
      response_type: 'code',
      scope: 'read',
      state: request.state,
      login_hint: 'ada@example.test',
      code_challenge: pkceChallengeOf(request.codeVerifier ?? ''),
      code_challenge_method: 'S256',
    });
  });

  it('makes a fresh state of ≥128 bits and a 43–128 character verifier each time', () => {
    const client = oauth(tokenServer(tokens({})).fetchFn);
    const a = client.buildAuthorizationRequest();
    const b = client.buildAuthorizationRequest();
    expect(a.state).not.toBe(b.state);
    expect(a.codeVerifier).not.toBe(b.codeVerifier);
    expect(a.state).toMatch(/^[A-Za-z0-9_-]{22,}$/); // 22 base64url characters carry 132 bits
    expect(a.codeVerifier).toMatch(/^[A-Za-z0-9._~-]{43,128}$/);
  });

  it('omits PKCE and scope when asked to / not configured', () => {
    const request = oauth(tokenServer(tokens({})).fetchFn).buildAuthorizationRequest({ usePkce: false });
    const params = new URL(request.url).searchParams;
    expect(request.codeVerifier).toBeUndefined();
    expect(params.has('code_challenge')).toBe(false);
    expect(params.has('scope')).toBe(false);
  });

  it('computes the RFC 7636 appendix B challenge', () => {
    expect(pkceChallengeOf('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });
});

describe('token requests', () => {
  it('exchanges a code with a form-encoded body and client_secret_post', async () => {
    const { fetchFn, calls } = tokenServer(
      tokens({
        access_token: 'at-1',
        refresh_token: 'rt-1',
        token_type: 'Bearer',
        expires_in: 600,
        scope: 'read',
      }),
    );
    const set = await oauth(fetchFn).exchangeCode('code-1', 'verifier-1');
    expect(set).toEqual({
      accessToken: 'at-1',
      refreshToken: 'rt-1',
      expiresAt: new Date('2026-03-02T09:10:00Z'),
      scope: 'read',
    });
    const [call] = calls;
    expect(call?.url).toBe('https://auth.example.test/auth/oauth2/token');
    expect(call?.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
    expect(call?.headers.has('authorization')).toBe(false);
    expect(call?.redirect).toBe('manual');
    expect(Object.fromEntries(call?.form ?? [])).toEqual({
      grant_type: 'authorization_code',
      code: 'code-1',
      redirect_uri: 'https://slotfeed.example/oauth/callback',
      code_verifier: 'verifier-1',
      client_id: 'client 1',
      client_secret: 's3cret:+&',
    });
  });

  it('sends client_secret_basic credentials form-urlencoded inside Basic', async () => {
    const { fetchFn, calls } = tokenServer(
      tokens({ access_token: 'at', refresh_token: 'rt', token_type: 'bearer' }),
    );
    await oauth(fetchFn, { clientAuth: 'client_secret_basic' }).refresh('rt-0');
    const [call] = calls;
    const basic = call?.headers.get('authorization') ?? '';
    expect(Buffer.from(basic.replace(/^Basic /, ''), 'base64').toString()).toBe('client+1:s3cret%3A%2B%26');
    expect(call?.form.has('client_secret')).toBe(false);
    expect(Object.fromEntries(call?.form ?? [])).toEqual({
      grant_type: 'refresh_token',
      refresh_token: 'rt-0',
    });
  });

  it('keeps the old refresh token when a refresh response carries none; reads sub from the JWT', async () => {
    const jwt = `e30.${Buffer.from(JSON.stringify({ sub: 'user-1', iat: 100, exp: 1900 })).toString('base64url')}.sig`;
    const { fetchFn } = tokenServer(tokens({ access_token: jwt, token_type: 'Bearer' }));
    const set = await oauth(fetchFn).refresh('rt-old');
    expect(set.refreshToken).toBe('rt-old');
    expect(set.subject).toBe('user-1');
    expect(set.expiresAt).toEqual(new Date(NOW.getTime() + 1800 * 1000));
  });

  it('treats a code exchange without a refresh token as an invalid payload', async () => {
    const { fetchFn } = tokenServer(tokens({ access_token: 'at', token_type: 'Bearer' }));
    const error = await upstreamFailure(oauth(fetchFn).exchangeCode('code-1'));
    expect(error).toBeInstanceOf(UpstreamInvalidPayloadError);
    expect((error as UpstreamInvalidPayloadError).path).toBe('refresh_token');
  });

  it('maps {"error":"invalid_grant"} to auth/invalid_grant without repeating the token or secret', async () => {
    const { fetchFn } = tokenServer(
      tokens(
        { error: 'invalid_grant', error_description: 'refresh token rt-dead-123 s3cret:+& revoked' },
        400,
      ),
    );
    const error = await upstreamFailure(oauth(fetchFn).refresh('rt-dead-123'));
    expect(error).toBeInstanceOf(UpstreamAuthError);
    expect((error as UpstreamAuthError).reason).toBe('invalid_grant');
    expect(error.endpoint).toBe('POST /oauth2/token');
    expect(error.message).not.toContain('rt-dead-123');
    expect(error.message).not.toContain('s3cret');
  });

  it('does not follow a redirect of the token endpoint', async () => {
    const { fetchFn } = tokenServer(
      () => new Response(null, { status: 307, headers: { location: 'https://x/' } }),
    );
    const error = await upstreamFailure(oauth(fetchFn).refresh('rt'));
    expect(error.code).toBe('unavailable');
    expect(error.status).toBe(307);
  });
});
