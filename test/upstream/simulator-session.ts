// Shared by the upstream tests that run against the simulator over real sockets: one simulator on a fixed
// clock, clients pointed at it, and the OAuth dance a browser would do.
import { expect } from '@jest/globals';
import { startSimulator } from '../../src/simulator/index.js';
import type { RunningSimulator, SimulatorOptions } from '../../src/simulator/index.js';
import { createApiClient } from '../../src/upstream/api-client.js';
import type { ApiClientOptions } from '../../src/upstream/api-client.js';
import { createOAuthClient } from '../../src/upstream/oauth.js';
import type { OAuthClient, OAuthClientOptions, TokenSet } from '../../src/upstream/oauth.js';

export const REFERENCE_NOW = new Date('2026-03-02T09:00:00Z');
export const fixedNow = () => REFERENCE_NOW;

export function startTestSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  return startSimulator({ port: 0, users: 3, seed: 7, now: fixedNow, ...options });
}

export function oauthClientFor(sim: RunningSimulator, extra: Partial<OAuthClientOptions> = {}): OAuthClient {
  return createOAuthClient({
    authUrl: sim.authUrl,
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    redirectUri: sim.redirectUris[0] ?? '',
    timeoutMs: 2000,
    now: fixedNow,
    ...extra,
  });
}

export function apiClientFor(sim: RunningSimulator, extra: Partial<ApiClientOptions> = {}) {
  return createApiClient({
    baseUrl: sim.baseUrl,
    timeoutMs: 2000,
    slotsQuery: { dateParam: 'date', timezoneParam: 'timezone' },
    now: fixedNow,
    ...extra,
  });
}

/** Follows /login with a login_hint (the simulator approves at once) and returns the code of the redirect. */
export async function authorizeAs(
  oauth: OAuthClient,
  email: string,
  usePkce = true,
): Promise<{ code: string; codeVerifier: string | undefined }> {
  const request = oauth.buildAuthorizationRequest({ loginHint: email, usePkce });
  const response = await fetch(request.url, { redirect: 'manual' });
  expect(response.status).toBe(302);
  const location = new URL(response.headers.get('location') ?? '');
  expect(location.searchParams.get('state')).toBe(request.state);
  const code = location.searchParams.get('code');
  if (code === null) throw new Error(`no code in the redirect: ${location.search}`);
  return { code, codeVerifier: request.codeVerifier };
}

export async function connectUser(oauth: OAuthClient, email: string): Promise<TokenSet> {
  const { code, codeVerifier } = await authorizeAs(oauth, email);
  return oauth.exchangeCode(code, codeVerifier);
}
