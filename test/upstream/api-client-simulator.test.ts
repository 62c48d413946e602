import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { DriftVariant, FaultOutcome, RunningSimulator } from '../../src/simulator/index.js';
import type { ApiClient, UpstreamEndpoint } from '../../src/upstream/api-client.js';
import {
  UpstreamAuthError,
  UpstreamBadRequestError,
  UpstreamInvalidPayloadError,
  UpstreamNotFoundError,
  UpstreamRateLimitedError,
  UpstreamUnavailableError,
} from '../../src/upstream/errors.js';
import type { EventType, Overview } from '../../src/upstream/schemas.js';
import { apiClientFor, connectUser, oauthClientFor, startTestSimulator } from './simulator-session.js';
import { upstreamFailure } from '../support/upstream-failure.js';

// Each client error class, produced by the matching simulator fault over a real socket.

let sim: RunningSimulator;
let api: ApiClient;
let token: string;
let user: RunningSimulator['users'][number];
let event: EventType;

const overviewQuery = () => ({ startDate: '2026-03-02', timezone: user.timezone, period: '4w' });
const dayBefore = (date: string | null | undefined) =>
  new Date(Date.parse(`${String(date)}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);

function queue(...outcomes: FaultOutcome[]) {
  sim.control.setFaults({ queue: outcomes });
}

/** Every endpoint, called the way the sync does. */
const calls: Record<UpstreamEndpoint, () => Promise<unknown>> = {
  'GET /events': () => api.listEventTypes(token),
  'GET /users/me': () => api.getProfile(token),
  'GET /calendars/{event_id}': () => api.getOverview(token, event.event_id, overviewQuery()),
  'GET /calendars/{event_id}/slots': () =>
    api.getSlots(token, event.event_id, { date: '2026-03-03', timezone: user.timezone }),
};

beforeAll(async () => {
  sim = await startTestSimulator();
  user = sim.users[0]!;
  token = (await connectUser(oauthClientFor(sim), user.email)).accessToken;
  api = apiClientFor(sim);
  event = (await api.listEventTypes(token)).find((e) => e.enabled)!;
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.control.setFaults({ queue: [], rateLimit: { requestsPerSecond: 0 } });
});

describe('status faults', () => {
  it('a queued 503 (an HTML page) is unavailable/status, retryable', async () => {
    queue({ endpoint: 'GET /events', kind: 'status', status: 503 });
    const error = await upstreamFailure(calls['GET /events']());
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect((error as UpstreamUnavailableError).cause).toBe('status');
    expect(error.status).toBe(503);
    expect(error.retryable).toBe(true);
  });

  it('a queued 500 on each endpoint is unavailable with that endpoint key', async () => {
    for (const endpoint of Object.keys(calls) as UpstreamEndpoint[]) {
      queue({ endpoint, kind: 'status', status: 500 });
      const error = await upstreamFailure(calls[endpoint]());
      expect([error.code, error.endpoint]).toEqual(['unavailable', endpoint]);
    }
  });

  it('a queued 401 is auth', async () => {
    queue({ endpoint: 'GET /users/me', kind: 'status', status: 401 });
    const error = await upstreamFailure(calls['GET /users/me']());
    expect(error).toBeInstanceOf(UpstreamAuthError);
    expect(error.message).not.toContain(token);
  });

  it('a token the service does not know is auth/invalid_token', async () => {
    const error = await upstreamFailure(api.listEventTypes('not.a.jwt'));
    expect(error).toBeInstanceOf(UpstreamAuthError);
    expect((error as UpstreamAuthError).reason).toBe('invalid_token');
  });
});

describe('rate limits', () => {
  it("429 with Retry-After '2' → rate_limited, retryAfterMs 2000", async () => {
    queue({ kind: 'rate_limited', retryAfter: '2' });
    const error = await upstreamFailure(calls['GET /events']());
    expect(error).toBeInstanceOf(UpstreamRateLimitedError);
    expect((error as UpstreamRateLimitedError).retryAfterMs).toBe(2000);
  });

  it('429 with an HTTP-date → retryAfterMs relative to the injected now', async () => {
    queue({ kind: 'rate_limited', retryAfter: 'Mon, 02 Mar 2026 09:00:05 GMT' });
    const error = await upstreamFailure(calls['GET /users/me']());
    expect((error as UpstreamRateLimitedError).retryAfterMs).toBe(5000);
  });

  it("the simulator's own per-client limit, answering with HTTP-dates", async () => {
    sim.control.setFaults({ rateLimit: { requestsPerSecond: 1, retryAfter: 'http-date' } });
    sim.control.advanceClock(2); // a fresh one-second window for this client
    // The client's clock follows the simulator's here, as two real clocks would roughly agree.
    const limited = apiClientFor(sim, { now: () => sim.control.now() });
    await limited.listEventTypes(token);
    const error = await upstreamFailure(limited.listEventTypes(token));
    expect(error).toBeInstanceOf(UpstreamRateLimitedError);
    expect((error as UpstreamRateLimitedError).retryAfterMs).toBe(1000);
  });
});

describe('transport failures', () => {
  it('a hang with a small timeoutMs is unavailable/timeout', async () => {
    queue({ endpoint: 'GET /events', kind: 'hang' });
    const impatient = apiClientFor(sim, { timeoutMs: 150 });
    const error = await upstreamFailure(impatient.listEventTypes(token));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect((error as UpstreamUnavailableError).cause).toBe('timeout');
    expect(error.status).toBeUndefined();
  });

  it('a closed port is unavailable/network', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const nowhere = apiClientFor(sim, { baseUrl: `http://127.0.0.1:${port}/api` });
    const error = await upstreamFailure(nowhere.listEventTypes(token));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect((error as UpstreamUnavailableError).cause).toBe('network');
    expect((error as UpstreamUnavailableError).detail).toBe('ECONNREFUSED');
  });

  it('a malformed (cut-off) body is invalid_payload, retryable', async () => {
    queue({ endpoint: 'GET /calendars/{event_id}', kind: 'malformed' });
    const error = await upstreamFailure(calls['GET /calendars/{event_id}']());
    expect(error).toBeInstanceOf(UpstreamInvalidPayloadError);
    expect((error as UpstreamInvalidPayloadError).path).toBe('(body)');
    expect(error.retryable).toBe(true);
  });

  it('a body over maxBodyBytes is invalid_payload', async () => {
    const tiny = apiClientFor(sim, { maxBodyBytes: 64 });
    const error = await upstreamFailure(tiny.listEventTypes(token));
    expect(error).toBeInstanceOf(UpstreamInvalidPayloadError);
    expect(error.retryable).toBe(false);
  });
});

describe('request errors', () => {
  it('an unknown event is not_found', async () => {
    const error = await upstreamFailure(api.getOverview(token, 'evt_does_not_exist', overviewQuery()));
    expect(error).toBeInstanceOf(UpstreamNotFoundError);
    expect(error.endpoint).toBe('GET /calendars/{event_id}');
    expect(
      await upstreamFailure(api.getSlots(token, 'evt/../x', { date: '2026-03-03', timezone: 'UTC' })),
    ).toBeInstanceOf(UpstreamNotFoundError);
  });

  it('a period of two months or more is bad_request with the service message', async () => {
    const error = await upstreamFailure(
      api.getOverview(token, event.event_id, { ...overviewQuery(), period: '2m' }),
    );
    expect(error).toBeInstanceOf(UpstreamBadRequestError);
    expect((error as UpstreamBadRequestError).excerpt).toBe('bad_request: period must be below 2 months');
  });

  it('a malformed period is bad_request', async () => {
    const error = await upstreamFailure(
      api.getOverview(token, event.event_id, { ...overviewQuery(), period: 'two weeks' }),
    );
    expect(error.code).toBe('bad_request');
  });
});

describe('payload drift', () => {
  it.each<[DriftVariant, (plain: Overview['availability']) => Partial<Overview['availability']>]>([
    ['monthsAsStrings', (a) => ({ disabled_dates: { ...a.disabled_dates, months: ['8', '12'] } })],
    ['firstAvailableNull', () => ({ first_available_date: null })],
    [
      'firstAvailableAsDateTime',
      (a) => ({
        first_available_date: `${a.first_available_date}T00:00:00+01:00`,
        last_available_date: `${a.last_available_date}T00:00:00+02:00`,
      }),
    ],
    [
      'datesWithoutOffset',
      (a) => ({
        first_available_date: `${a.first_available_date}T00:00:00`,
        last_available_date: `${a.last_available_date}T00:00:00`,
      }),
    ],
    [
      // Berlin midnight as a UTC instant carries the previous day's date.
      'datesInUtc',
      (a) => ({
        first_available_date: `${dayBefore(a.first_available_date)}T23:00:00Z`,
        last_available_date: `${dayBefore(a.last_available_date)}T22:00:00Z`,
      }),
    ],
  ])('drift %s is accepted and kept as sent', async (variant, drifted) => {
    sim.control.setDisabledDates(user.id, { months: [8, 12] });
    const plain = await api.getOverview(token, event.event_id, overviewQuery());
    expect(plain.availability.disabled_dates?.months).toEqual([8, 12]);
    // Berlin: the first date is in winter time and the last in summer time, so their offsets differ.
    expect(user.timezone).toBe('Europe/Berlin');
    expect(plain.availability.first_available_date).toMatch(/^2026-03-(0\d|1\d|2[0-8])$/);
    expect(plain.availability.last_available_date).toMatch(/^2026-(03-3[01]|0[4-9]-\d\d)$/);
    queue({ endpoint: 'GET /calendars/{event_id}', kind: 'drift', variant });
    const overview = await api.getOverview(token, event.event_id, overviewQuery());
    expect(overview).toEqual({
      ...plain,
      availability: { ...plain.availability, ...drifted(plain.availability) },
    });
  });

  it('invalidShape is rejected on every endpoint, naming where', async () => {
    // The simulator picks one of several invalid shapes per call; six calls per endpoint meet most of them.
    for (const endpoint of Object.keys(calls) as UpstreamEndpoint[]) {
      for (let i = 0; i < 6; i++) {
        queue({ endpoint, kind: 'drift', variant: 'invalidShape' });
        const error = await upstreamFailure(calls[endpoint]());
        expect(error).toBeInstanceOf(UpstreamInvalidPayloadError);
        expect(error.endpoint).toBe(endpoint);
        expect((error as UpstreamInvalidPayloadError).path).not.toBe('(body)');
        expect(error.retryable).toBe(false);
      }
    }
  });
});

describe('call accounting', () => {
  it('onCall sees each call once, as the simulator counts them', async () => {
    const seen: string[] = [];
    const counted = apiClientFor(sim, {
      onCall: (endpoint, o) => seen.push(`${endpoint} ${o.status ?? '-'}`),
    });
    sim.control.resetCallCounts();
    queue({ endpoint: 'GET /users/me', kind: 'status', status: 503 });
    await counted.listEventTypes(token);
    await upstreamFailure(counted.getProfile(token));
    await counted.getSlots(token, event.event_id, { date: '2026-03-03', timezone: user.timezone });
    expect(seen).toEqual(['GET /events 200', 'GET /users/me 503', 'GET /calendars/{event_id}/slots 200']);
    expect(sim.control.callCounts()).toMatchObject({
      'GET /events': 1,
      'GET /users/me': 1,
      'GET /calendars/{event_id}/slots': 1,
    });
  });
});
