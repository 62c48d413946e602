import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import type { RunningSimulator } from '../../src/simulator/index.js';
import {
  REFERENCE_NOW,
  apiGet,
  authorizationCode,
  connectUser,
  loginUrl,
  pkcePair,
  redirectLocation,
  startFixedSimulator,
  tokenRequest,
} from './sim-client.js';

let sim: RunningSimulator;
let rotating: RunningSimulator;

beforeAll(async () => {
  sim = await startFixedSimulator({ accessTokenTtlSeconds: 600 });
  rotating = await startFixedSimulator({ rotateRefreshTokens: true });
});
afterAll(async () => {
  await sim.close();
  await rotating.close();
});

const redirectUri = () => sim.redirectUris[0] ?? '';

async function expectOAuthError(response: Response, status: number, error: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('cache-control')).toBe('no-store');
  const body = (await response.json()) as { error: string; error_description: string };
  expect(body.error).toBe(error);
  expect(typeof body.error_description).toBe('string');
}

describe('authorization endpoint', () => {
  it('shows a consent page listing every user with an approve form', async () => {
    const response = await fetch(loginUrl(sim, {}), { redirect: 'manual' });
    expect(response.status).toBe(200);
    const html = await response.text();
    for (const user of sim.users) {
      expect(html).toContain(user.email);
      expect(html).toContain(`value="${user.id}"`);
    }
    expect(html).toContain('action="/auth/login/approve"');
  });

  it('marks the users it is told to, as the demo marks the three it connected', async () => {
    const marked = await startFixedSimulator({
      signInNote: (_user, index) => (index < 3 ? 'connected by the demo' : undefined),
    });
    try {
      const html = await (await fetch(loginUrl(marked, {}), { redirect: 'manual' })).text();
      const rows = html.split('<li>').slice(1);
      expect(rows).toHaveLength(marked.users.length);
      rows.forEach((row, i) => {
        expect(row.includes('(connected by the demo)')).toBe(i < 3);
        expect(row).toContain(marked.users[i]!.email);
      });
    } finally {
      await marked.close();
    }
  });

  it('approving through the form redirects with code and state', async () => {
    const form = new URLSearchParams({
      client_id: sim.clientId,
      redirect_uri: redirectUri(),
      response_type: 'code',
      scope: 'calendars:read',
      state: 'form-state',
      user_id: sim.users[1]?.id ?? '',
      decision: 'approve',
    });
    const response = await fetch(`${sim.authUrl}/login/approve`, {
      method: 'POST',
      body: form,
      redirect: 'manual',
    });
    const location = await redirectLocation(response);
    expect(`${location.origin}${location.pathname}`).toBe(redirectUri());
    expect(location.searchParams.get('state')).toBe('form-state');
    expect(location.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
  });

  it('deny redirects with access_denied and the state', async () => {
    const form = new URLSearchParams({
      client_id: sim.clientId,
      redirect_uri: redirectUri(),
      response_type: 'code',
      state: 'deny-state',
      decision: 'deny',
    });
    const location = await redirectLocation(
      await fetch(`${sim.authUrl}/login/approve`, { method: 'POST', body: form, redirect: 'manual' }),
    );
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe('deny-state');
    expect(location.searchParams.has('code')).toBe(false);
  });

  it('an unknown login_hint shows the page instead of approving', async () => {
    const response = await fetch(loginUrl(sim, { login_hint: 'nobody@example.test' }), {
      redirect: 'manual',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
  });

  it('never redirects to an unregistered redirect_uri or for an unknown client', async () => {
    const evil = await fetch(loginUrl(sim, { redirect_uri: 'https://evil.example/cb' }), {
      redirect: 'manual',
    });
    expect(evil.status).toBe(400);
    expect(evil.headers.get('location')).toBeNull();
    expect(((await evil.json()) as { error: string }).error).toBe('invalid_request');
    const html = await fetch(loginUrl(sim, { client_id: 'someone-else' }), {
      redirect: 'manual',
      headers: { accept: 'text/html' },
    });
    expect(html.status).toBe(400);
    expect(html.headers.get('content-type')).toContain('text/html');
  });

  it('redirects back with unsupported_response_type for response_type=token', async () => {
    const location = await redirectLocation(
      await fetch(loginUrl(sim, { response_type: 'token', login_hint: sim.users[0]?.email }), {
        redirect: 'manual',
      }),
    );
    expect(location.searchParams.get('error')).toBe('unsupported_response_type');
    expect(location.searchParams.get('state')).toBe('st-123');
  });

  it('rejects a plain PKCE method with invalid_request in the redirect', async () => {
    const { challenge } = pkcePair();
    const location = await redirectLocation(
      await fetch(loginUrl(sim, { code_challenge: challenge, code_challenge_method: 'plain' }), {
        redirect: 'manual',
      }),
    );
    expect(location.searchParams.get('error')).toBe('invalid_request');
  });
});

describe('token endpoint: authorization_code', () => {
  it('exchanges a code (no PKCE) for a JWT with the documented claims', async () => {
    const code = await authorizationCode(sim, 0);
    const response = await tokenRequest(sim, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri(),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 600, scope: 'calendars:read' });
    expect(typeof body.refresh_token).toBe('string');
    const claims = decodeJwt(body.access_token as string);
    const iat = Date.parse(REFERENCE_NOW) / 1000;
    expect(claims).toMatchObject({
      sub: sim.users[0]?.id,
      iss: `${sim.origin}/auth`,
      aud: 'calendbook-api',
      client_id: sim.clientId,
      scope: 'calendars:read',
      iat,
      exp: iat + 600,
    });
    expect(typeof claims.jti).toBe('string');
    expect((await apiGet(sim, '/users/me', body.access_token as string)).status).toBe(200);
  });

  it('exchanges a code with PKCE S256 and HTTP Basic client auth', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await authorizationCode(sim, 1, {
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const response = await tokenRequest(
      sim,
      { grant_type: 'authorization_code', code, redirect_uri: redirectUri(), code_verifier: verifier },
      'basic',
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { access_token: string };
    expect(decodeJwt(body.access_token).sub).toBe(sim.users[1]?.id);
  });

  it('rejects a wrong client secret in the body with 401 invalid_client and no challenge', async () => {
    const response = await fetch(`${sim.authUrl}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: 'x',
        client_id: sim.clientId,
        client_secret: 'nope',
      }),
    });
    expect(response.headers.get('www-authenticate')).toBeNull();
    await expectOAuthError(response, 401, 'invalid_client');
  });

  it('rejects bad Basic credentials with 401 invalid_client and WWW-Authenticate', async () => {
    const response = await fetch(`${sim.authUrl}/oauth2/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${sim.clientId}:wrong`).toString('base64')}`,
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'x' }),
    });
    expect(response.headers.get('www-authenticate')).toMatch(/^Basic /);
    await expectOAuthError(response, 401, 'invalid_client');
  });

  it('rejects a redirect_uri that differs from the authorization request', async () => {
    const code = await authorizationCode(sim, 0);
    const response = await tokenRequest(sim, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'http://127.0.0.1:3000/other',
    });
    await expectOAuthError(response, 400, 'invalid_grant');
  });

  it('a reused code fails and revokes the tokens issued from it', async () => {
    const code = await authorizationCode(sim, 2);
    const params = { grant_type: 'authorization_code', code, redirect_uri: redirectUri() };
    const first = (await (await tokenRequest(sim, params)).json()) as {
      access_token: string;
      refresh_token: string;
    };
    expect((await apiGet(sim, '/events', first.access_token)).status).toBe(200);
    await expectOAuthError(await tokenRequest(sim, params), 400, 'invalid_grant');
    expect((await apiGet(sim, '/events', first.access_token)).status).toBe(401);
    const refresh = await tokenRequest(sim, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
    });
    await expectOAuthError(refresh, 400, 'invalid_grant');
  });

  it('a code expires 60 s after it was issued (sim clock)', async () => {
    const code = await authorizationCode(sim, 0);
    sim.control.advanceClock(61);
    try {
      const response = await tokenRequest(sim, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri(),
      });
      await expectOAuthError(response, 400, 'invalid_grant');
    } finally {
      sim.control.setClock(REFERENCE_NOW);
    }
  });

  it('rejects a wrong or missing PKCE verifier, and a verifier without a challenge', async () => {
    const { challenge } = pkcePair();
    const pkce = { code_challenge: challenge, code_challenge_method: 'S256' };
    const wrong = await tokenRequest(sim, {
      grant_type: 'authorization_code',
      code: await authorizationCode(sim, 0, pkce),
      redirect_uri: redirectUri(),
      code_verifier: pkcePair().verifier,
    });
    await expectOAuthError(wrong, 400, 'invalid_grant');
    const missing = await tokenRequest(sim, {
      grant_type: 'authorization_code',
      code: await authorizationCode(sim, 0, pkce),
      redirect_uri: redirectUri(),
    });
    await expectOAuthError(missing, 400, 'invalid_grant');
    const unexpected = await tokenRequest(sim, {
      grant_type: 'authorization_code',
      code: await authorizationCode(sim, 0),
      redirect_uri: redirectUri(),
      code_verifier: pkcePair().verifier,
    });
    await expectOAuthError(unexpected, 400, 'invalid_grant');
  });

  it('answers unsupported_grant_type, invalid_request for missing params and non-form bodies', async () => {
    await expectOAuthError(
      await tokenRequest(sim, { grant_type: 'password' }),
      400,
      'unsupported_grant_type',
    );
    await expectOAuthError(await tokenRequest(sim, {}), 400, 'invalid_request');
    await expectOAuthError(
      await tokenRequest(sim, { grant_type: 'authorization_code' }),
      400,
      'invalid_request',
    );
    await expectOAuthError(await tokenRequest(sim, { grant_type: 'refresh_token' }), 400, 'invalid_request');
    const json = await fetch(`${sim.authUrl}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        grant_type: 'refresh_token',
        client_id: sim.clientId,
        client_secret: sim.clientSecret,
      }),
    });
    await expectOAuthError(json, 400, 'invalid_request');
  });
});

describe('token endpoint: refresh_token', () => {
  it('without rotation returns a new access token only, and the refresh token keeps working', async () => {
    const tokens = await connectUser(sim, 3);
    sim.control.advanceClock(30);
    try {
      for (let i = 0; i < 2; i++) {
        const response = await tokenRequest(sim, {
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
        });
        expect(response.status).toBe(200);
        const body = (await response.json()) as Record<string, unknown>;
        expect(body).not.toHaveProperty('refresh_token');
        expect(body.access_token).not.toBe(tokens.access_token);
        expect(decodeJwt(body.access_token as string).iat).toBe(Date.parse(REFERENCE_NOW) / 1000 + 30);
      }
    } finally {
      sim.control.setClock(REFERENCE_NOW);
    }
  });

  it('with rotation issues a new refresh token; reusing the old one revokes the whole family', async () => {
    const first = await connectUser(rotating, 0);
    const second = (await (
      await tokenRequest(rotating, { grant_type: 'refresh_token', refresh_token: first.refresh_token })
    ).json()) as { access_token: string; refresh_token: string };
    expect(second.refresh_token).toEqual(expect.any(String));
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await apiGet(rotating, '/events', second.access_token)).status).toBe(200);

    const reuse = await tokenRequest(rotating, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
    });
    await expectOAuthError(reuse, 400, 'invalid_grant');
    const latest = await tokenRequest(rotating, {
      grant_type: 'refresh_token',
      refresh_token: second.refresh_token,
    });
    await expectOAuthError(latest, 400, 'invalid_grant');
    expect((await apiGet(rotating, '/events', second.access_token)).status).toBe(401);
    expect((await apiGet(rotating, '/events', first.access_token)).status).toBe(401);
  });

  it('a revoked grant refuses refresh, and a new login works again', async () => {
    const tokens = await connectUser(sim, 4);
    const userId = sim.users[4]?.id ?? '';
    expect(sim.control.revokeGrants(userId)).toBeGreaterThanOrEqual(1);
    const refresh = await tokenRequest(sim, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    });
    await expectOAuthError(refresh, 400, 'invalid_grant');
    const again = await connectUser(sim, 4);
    expect((await apiGet(sim, '/users/me', again.access_token)).status).toBe(200);
  });
});
