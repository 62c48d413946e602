// The demo's history reaches the simulator in process (simulator/in-process-fetch.ts). What the sync's clients
// get that way must be what they get over a socket: the same payloads, the same token rotation, the same errors
// with their statuses and headers, and a timeout that still ends the wait.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { RunningSimulator } from '../../src/simulator/index.js';
import type { ApiClient } from '../../src/upstream/api-client.js';
import {
  UpstreamAuthError,
  UpstreamRateLimitedError,
  UpstreamUnavailableError,
} from '../../src/upstream/errors.js';
import {
  apiClientFor,
  authorizeAs,
  oauthClientFor,
  startTestSimulator,
} from '../upstream/simulator-session.js';
import { upstreamFailure } from '../support/upstream-failure.js';

let sim: RunningSimulator;
let overSocket: ApiClient;
let inProcess: ApiClient;
let token: string;

beforeAll(async () => {
  sim = await startTestSimulator();
  // The code exchange, a form POST, in process.
  const oauth = oauthClientFor(sim, { fetch: sim.inProcessFetch });
  const { code, codeVerifier } = await authorizeAs(oauth, sim.users[0]!.email);
  token = (await oauth.exchangeCode(code, codeVerifier)).accessToken;
  overSocket = apiClientFor(sim);
  inProcess = apiClientFor(sim, { fetch: sim.inProcessFetch });
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.control.setFaults({ queue: [], rateLimit: { requestsPerSecond: 0 } });
});

describe('the simulator in process', () => {
  it('answers each endpoint with what it answers over a socket', async () => {
    const events = await inProcess.listEventTypes(token);
    expect(events).toEqual(await overSocket.listEventTypes(token));
    expect(await inProcess.getProfile(token)).toEqual(await overSocket.getProfile(token));
    const event = events.find((e) => e.enabled)!;
    const timezone = sim.users[0]!.timezone;
    const overview = { startDate: '2026-03-02', timezone, period: '4w' };
    expect(await inProcess.getOverview(token, event.event_id, overview)).toEqual(
      await overSocket.getOverview(token, event.event_id, overview),
    );
    const day = { date: '2026-03-03', timezone };
    const slots = await inProcess.getSlots(token, event.event_id, day);
    expect(slots).toEqual(await overSocket.getSlots(token, event.event_id, day));
    expect(Object.values(slots).flat().length).toBeGreaterThan(0);
  });

  it('rotates a refresh token as over a socket: the new one works, the old one is refused', async () => {
    const rotating = await startTestSimulator({ rotateRefreshTokens: true });
    try {
      const oauth = oauthClientFor(rotating, { fetch: rotating.inProcessFetch });
      const { code, codeVerifier } = await authorizeAs(oauth, rotating.users[1]!.email);
      const first = await oauth.exchangeCode(code, codeVerifier);
      const second = await oauth.refresh(first.refreshToken!);
      expect(second.refreshToken).not.toBe(first.refreshToken);
      const api = apiClientFor(rotating, { fetch: rotating.inProcessFetch });
      expect((await api.getProfile(second.accessToken)).email).toBe(rotating.users[1]!.email);
      await expect(oauth.refresh(first.refreshToken!)).rejects.toBeInstanceOf(UpstreamAuthError);
    } finally {
      await rotating.close();
    }
  });

  it('fails with the error, status and Retry-After a socket brings', async () => {
    const refused = await upstreamFailure(inProcess.listEventTypes('not.a.jwt'));
    expect(refused).toBeInstanceOf(UpstreamAuthError);
    expect(refused.status).toBe(401);

    sim.control.setFaults({ queue: [{ endpoint: 'GET /events', kind: 'status', status: 503 }] });
    const unavailable = await upstreamFailure(inProcess.listEventTypes(token));
    expect([unavailable.constructor, unavailable.status]).toEqual([UpstreamUnavailableError, 503]);

    sim.control.setFaults({ queue: [{ kind: 'rate_limited', retryAfter: '2' }] });
    const limited = await upstreamFailure(inProcess.getProfile(token));
    expect(limited).toBeInstanceOf(UpstreamRateLimitedError);
    expect((limited as UpstreamRateLimitedError).retryAfterMs).toBe(2000);
  });

  it('answers its own origin only: a client pointed elsewhere fails rather than reach the simulator', async () => {
    const elsewhere = apiClientFor(sim, {
      fetch: sim.inProcessFetch,
      baseUrl: 'http://calendbook.example/api',
    });
    const error = await upstreamFailure(elsewhere.getProfile(token));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect((error as UpstreamUnavailableError).cause).toBe('network');
  });

  it('gives up on an answer that never comes when the timeout ends the wait', async () => {
    sim.control.setFaults({ queue: [{ endpoint: 'GET /users/me', kind: 'hang' }] });
    const impatient = apiClientFor(sim, { fetch: sim.inProcessFetch, timeoutMs: 200 });
    const error = await upstreamFailure(impatient.getProfile(token));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect((error as UpstreamUnavailableError).cause).toBe('timeout');
  });
});
