// Tiny HTTP helpers for the simulator tests (deliberately not src/upstream: these tests pin the simulator alone).
import { createHash, randomBytes } from 'node:crypto';
import type { RunningSimulator, SimulatorOptions } from '../../src/simulator/index.js';
import { startSimulator } from '../../src/simulator/index.js';

/** Monday 2026-03-02 09:00 UTC: before the EU (03-29) and US (03-08) spring changes. */
export const REFERENCE_NOW = '2026-03-02T09:00:00Z';

export function startFixedSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const now = new Date(REFERENCE_NOW);
  return startSimulator({ now: () => now, ...options });
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function loginUrl(sim: RunningSimulator, params: Record<string, string | undefined>): string {
  const url = new URL(`${sim.authUrl}/login`);
  const all: Record<string, string | undefined> = {
    client_id: sim.clientId,
    redirect_uri: sim.redirectUris[0],
    response_type: 'code',
    scope: 'calendars:read',
    state: 'st-123',
    ...params,
  };
  for (const [k, v] of Object.entries(all)) if (v !== undefined) url.searchParams.set(k, v);
  return url.toString();
}

/** Follows nothing: returns the Location header's URL of a 302. */
export async function redirectLocation(response: Response): Promise<URL> {
  if (response.status !== 302)
    throw new Error(`expected 302, got ${response.status}: ${await response.text()}`);
  return new URL(response.headers.get('location') ?? '');
}

export async function authorizationCode(
  sim: RunningSimulator,
  userIndex: number,
  extra: Record<string, string | undefined> = {},
): Promise<string> {
  const email = sim.users[userIndex]?.email;
  const response = await fetch(loginUrl(sim, { login_hint: email, ...extra }), { redirect: 'manual' });
  const code = (await redirectLocation(response)).searchParams.get('code');
  if (!code) throw new Error('no code in redirect');
  return code;
}

export function tokenRequest(
  sim: RunningSimulator,
  params: Record<string, string>,
  auth: 'body' | 'basic' = 'body',
): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const form = new URLSearchParams(params);
  if (auth === 'basic') {
    headers.authorization = `Basic ${Buffer.from(`${sim.clientId}:${sim.clientSecret}`).toString('base64')}`;
  } else {
    form.set('client_id', sim.clientId);
    form.set('client_secret', sim.clientSecret);
  }
  return fetch(`${sim.authUrl}/oauth2/token`, { method: 'POST', headers, body: form });
}

export interface TokenSet {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: string;
  scope: string;
}

export async function connectUser(sim: RunningSimulator, userIndex: number): Promise<TokenSet> {
  const code = await authorizationCode(sim, userIndex);
  const response = await tokenRequest(sim, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: sim.redirectUris[0] ?? '',
  });
  if (response.status !== 200) throw new Error(`token exchange failed: ${response.status}`);
  return (await response.json()) as TokenSet;
}

export function apiGet(
  sim: RunningSimulator,
  path: string,
  accessToken: string | null,
  init: RequestInit = {},
): Promise<Response> {
  const headers: Record<string, string> = accessToken ? { authorization: `Bearer ${accessToken}` } : {};
  return fetch(`${sim.baseUrl}${path}`, { ...init, headers });
}

export async function apiJson<T>(sim: RunningSimulator, path: string, accessToken: string): Promise<T> {
  const response = await apiGet(sim, path, accessToken);
  if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

export async function simHttp(
  sim: RunningSimulator,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${sim.origin}/__sim${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text ? (JSON.parse(text) as unknown) : null };
}

export interface SlotListBody {
  timezone: string;
  booking_type: string;
  slot_list: Record<string, object>;
}

export interface OverviewBody {
  timezone: string;
  availability: {
    disabled_dates: { days: string[]; months: unknown[] };
    first_available_date: string;
    last_available_date: string | null;
    weekly: { week_days: Record<string, boolean> };
    available_dates: string[];
  };
}

export async function slotKeys(
  sim: RunningSimulator,
  token: string,
  eventId: string,
  date: string,
  timezone: string,
): Promise<string[]> {
  const query = new URLSearchParams({ date, timezone });
  const body = await apiJson<SlotListBody>(sim, `/calendars/${eventId}/slots?${query}`, token);
  return Object.keys(body.slot_list);
}
