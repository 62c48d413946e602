import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DateTime } from 'luxon';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { UpstreamAuthError, UpstreamError } from '../../src/upstream/errors.js';
import {
  REFERENCE_NOW,
  apiClientFor,
  authorizeAs,
  connectUser,
  oauthClientFor,
  startTestSimulator,
} from './simulator-session.js';

async function authFailure(p: Promise<unknown>): Promise<UpstreamAuthError> {
  try {
    await p;
  } catch (e: unknown) {
    if (e instanceof UpstreamAuthError) return e;
    throw e;
  }
  throw new Error('call succeeded');
}

describe('OAuth against the simulator (refresh tokens not rotated)', () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await startTestSimulator({ accessTokenTtlSeconds: 900 });
  });
  afterAll(() => sim.close());

  it('runs the whole flow: authorize with login_hint → exchange code → API calls as that user', async () => {
    const user = sim.users[0]!;
    const oauth = oauthClientFor(sim);
    const tokens = await connectUser(oauth, user.email);
    expect(tokens.subject).toBe(user.id);
    expect(tokens.expiresAt).toEqual(new Date(REFERENCE_NOW.getTime() + 900_000));
    expect(tokens.refreshToken).not.toBe('');

    const api = apiClientFor(sim);
    const profile = await api.getProfile(tokens.accessToken);
    expect(profile).toMatchObject({ email: user.email, name: user.name, timezone: user.timezone });
    const events = await api.listEventTypes(tokens.accessToken);
    expect(events.map((e) => e.event_id)).toEqual(
      sim.control.listUsers()[0]?.event_types.map((e) => e.event_id),
    );

    const event = events.find((e) => e.enabled)!;
    const overview = await api.getOverview(tokens.accessToken, event.event_id, {
      startDate: '2026-03-02',
      timezone: user.timezone,
      period: '4w',
    });
    const day = overview.availability.available_dates[0]!;
    const slots = await api.getSlots(tokens.accessToken, event.event_id, {
      date: day,
      timezone: user.timezone,
    });
    expect(slots.starts.length).toBeGreaterThan(0);
    // Ground truth: the simulator's own slot rule over that day in the user's zone.
    const dayStart = DateTime.fromISO(day, { zone: user.timezone });
    const truth = sim.control.slotsFor(
      event.event_id,
      dayStart.toISO()!,
      dayStart.plus({ days: 1 }).toISO()!,
    );
    expect(slots.starts).toEqual(truth.map((s) => new Date(s).toISOString()));
  });

  it('works without PKCE and with client_secret_basic', async () => {
    const oauth = oauthClientFor(sim, { clientAuth: 'client_secret_basic' });
    const { code } = await authorizeAs(oauth, sim.users[1]!.email, false);
    const tokens = await oauth.exchangeCode(code);
    expect(tokens.subject).toBe(sim.users[1]!.id);
  });

  it('keeps the refresh token when the refresh response carries none, and it stays usable', async () => {
    const oauth = oauthClientFor(sim);
    const first = await connectUser(oauth, sim.users[0]!.email);
    const second = await oauth.refresh(first.refreshToken);
    expect(second.refreshToken).toBe(first.refreshToken);
    expect(second.accessToken).not.toBe(first.accessToken);
    const third = await oauth.refresh(second.refreshToken);
    expect(await apiClientFor(sim).getProfile(third.accessToken)).toMatchObject({
      email: sim.users[0]!.email,
    });
  });

  it('an expired access token is an auth error; a refresh brings it back', async () => {
    const oauth = oauthClientFor(sim);
    const api = apiClientFor(sim);
    const tokens = await connectUser(oauth, sim.users[0]!.email);
    sim.control.advanceClock(901);
    try {
      const error = await authFailure(api.listEventTypes(tokens.accessToken));
      expect(error.status).toBe(401);
      expect(error.reason).toBe('invalid_token');
      expect(error.retryable).toBe(false);
      expect(error.message).not.toContain(tokens.accessToken);
      const renewed = await oauth.refresh(tokens.refreshToken);
      expect(await api.listEventTypes(renewed.accessToken)).not.toHaveLength(0);
    } finally {
      sim.control.setClock(REFERENCE_NOW.toISOString());
    }
  });

  it('a replayed code, a revoked grant and a wrong client secret are auth errors with their reason', async () => {
    const oauth = oauthClientFor(sim);
    const { code, codeVerifier } = await authorizeAs(oauth, sim.users[2]!.email);
    const tokens = await oauth.exchangeCode(code, codeVerifier);
    const replay = await authFailure(oauth.exchangeCode(code, codeVerifier));
    expect(replay.reason).toBe('invalid_grant');
    expect(replay.message).not.toContain(code);

    sim.control.revokeGrants(sim.users[2]!.id);
    const revoked = await authFailure(oauth.refresh(tokens.refreshToken));
    expect(revoked.reason).toBe('invalid_grant');
    expect(revoked.message).not.toContain(tokens.refreshToken);

    const impostor = oauthClientFor(sim, { clientSecret: 'not-the-secret' });
    const other = await authorizeAs(impostor, sim.users[1]!.email);
    const wrongSecret = await authFailure(impostor.exchangeCode(other.code, other.codeVerifier));
    expect(wrongSecret.reason).toBe('invalid_client');
    expect(wrongSecret.message).not.toContain('not-the-secret');
  });

  it('a 503 of the token endpoint is unavailable, not auth', async () => {
    const oauth = oauthClientFor(sim);
    const tokens = await connectUser(oauth, sim.users[0]!.email);
    sim.control.setFaults({ queue: [{ endpoint: 'POST /oauth2/token', kind: 'status', status: 503 }] });
    const error = await oauth.refresh(tokens.refreshToken).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).code).toBe('unavailable');
  });
});

describe('OAuth against the simulator (refresh tokens rotated)', () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await startTestSimulator({ rotateRefreshTokens: true });
  });
  afterAll(() => sim.close());

  it('a refresh returns a new refresh token; reusing the old one is invalid_grant', async () => {
    const oauth = oauthClientFor(sim);
    const first = await connectUser(oauth, sim.users[0]!.email);
    const second = await oauth.refresh(first.refreshToken);
    expect(second.refreshToken).not.toBe(first.refreshToken);
    const reuse = await authFailure(oauth.refresh(first.refreshToken));
    expect(reuse.reason).toBe('invalid_grant');
    expect(reuse.code).toBe('auth');
    expect(reuse.endpoint).toBe('POST /oauth2/token');
  });
});
