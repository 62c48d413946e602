import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { DateTime } from 'luxon';
import type { RunningSimulator } from '../../src/simulator/index.js';
import type { TokenSet } from './sim-client.js';
import {
  REFERENCE_NOW,
  apiGet,
  authorizationCode,
  connectUser,
  simHttp,
  startFixedSimulator,
  tokenRequest,
} from './sim-client.js';

let sim: RunningSimulator;
let tokens: TokenSet;
let eventId: string;

const NO_FAULTS = {
  latencyMs: 0,
  jitterMs: 0,
  errorRate: 0,
  hangRate: 0,
  malformedJsonRate: 0,
  rateLimit: { requestsPerSecond: 0, retryAfter: 'seconds' as const },
  drift: {
    monthsAsStrings: false,
    firstAvailableNull: false,
    firstAvailableAsDateTime: false,
    datesInUtc: false,
    datesWithoutOffset: false,
    zoneNotAsked: false,
    invalidShapes: false,
  },
  only: null as unknown as undefined,
  queue: [],
};

beforeAll(async () => {
  sim = await startFixedSimulator();
  tokens = await connectUser(sim, 0);
  eventId = sim.control.listUsers()[0]?.event_types[0]?.event_id ?? '';
  // A month off, for the drifts that send disabled months as strings (seeded user 0 has none).
  sim.control.setDisabledDates(sim.control.listUsers()[0]!.id, { months: [8] });
});
afterAll(() => sim.close());
afterEach(() => {
  sim.control.setFaults(NO_FAULTS);
  sim.control.setClock(REFERENCE_NOW);
});

const overviewPath = () => `/calendars/${eventId}?start_date=2026-03-02&timezone=Europe/Berlin`;
const slotsPath = () => `/calendars/${eventId}/slots?date=2026-03-03&timezone=Europe/Berlin`;
const get = (path: string, init: RequestInit = {}) => apiGet(sim, path, tokens.access_token, init);
const overviewDates = async () => {
  const body = (await (await get(overviewPath())).json()) as {
    availability: { first_available_date: string; last_available_date: string };
  };
  return { first: body.availability.first_available_date, last: body.availability.last_available_date };
};

/** Minimal shape checks, the kind the real client's zod schemas make. */
const VALID: Record<string, (body: unknown) => boolean> = {
  '/events': (b) =>
    Array.isArray(b) &&
    b.every(
      (e: Record<string, unknown>) =>
        typeof e.duration_minutes === 'number' && typeof e.enabled === 'boolean',
    ),
  '/users/me': (b) => {
    const p = b as Record<string, unknown>;
    return (
      typeof p.email === 'string' &&
      typeof p.timezone === 'string' &&
      typeof p.notification_settings === 'object'
    );
  },
  overview: (b) => {
    const a = (b as { availability?: Record<string, unknown> }).availability;
    const weekDays = (a?.weekly as { week_days?: unknown } | undefined)?.week_days;
    const months = (a?.disabled_dates as { months?: unknown[] } | undefined)?.months;
    return (
      !!a &&
      Array.isArray(a.available_dates) &&
      typeof weekDays === 'object' &&
      !Array.isArray(weekDays) &&
      Array.isArray(months) &&
      months.every((m) => /^\d+$/.test(String(m)))
    );
  },
  slots: (b) => {
    const list = (b as { slot_list?: unknown }).slot_list;
    return (
      typeof list === 'object' &&
      list !== null &&
      !Array.isArray(list) &&
      Object.keys(list).every((k) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(k))
    );
  },
};

describe('forced outcomes (queue)', () => {
  it('status faults hit only the matching endpoint, in order, once each', async () => {
    sim.control.setFaults({
      queue: [
        { endpoint: 'GET /events', kind: 'status', status: 500 },
        { endpoint: 'GET /events', kind: 'status', status: 503 },
      ],
    });
    expect((await get('/users/me')).status).toBe(200);
    const first = await get('/events');
    expect(first.status).toBe(500);
    expect(((await first.json()) as { error: string }).error).toBe('internal_error');
    const second = await get('/events');
    expect(second.status).toBe(503);
    expect(second.headers.get('content-type')).toContain('text/html');
    expect((await get('/events')).status).toBe(200);
    expect(sim.control.getFaults().queue).toEqual([]);
  });

  it('a 400 on the token endpoint is an RFC 6749 error, and the code is still usable afterwards', async () => {
    const code = await authorizationCode(sim, 1);
    sim.control.setFaults({ queue: [{ endpoint: 'POST /oauth2/token', kind: 'status', status: 400 }] });
    const params = { grant_type: 'authorization_code', code, redirect_uri: sim.redirectUris[0] ?? '' };
    const faulted = await tokenRequest(sim, params);
    expect(faulted.status).toBe(400);
    expect(faulted.headers.get('cache-control')).toBe('no-store');
    expect(((await faulted.json()) as { error: string }).error).toBe('invalid_request');
    expect((await tokenRequest(sim, params)).status).toBe(200);
  });

  it('hang: the request never answers until the client gives up', async () => {
    sim.control.setFaults({ queue: [{ endpoint: 'GET /users/me', kind: 'hang' }] });
    await expect(get('/users/me', { signal: AbortSignal.timeout(200) })).rejects.toThrow();
    expect((await get('/users/me')).status).toBe(200);
  });

  it('malformed: 200 with a truncated JSON body', async () => {
    sim.control.setFaults({ queue: [{ kind: 'malformed' }] });
    const response = await get('/events');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    const text = await response.text();
    expect(() => JSON.parse(text) as unknown).toThrow();
    expect(text.length).toBeGreaterThan(0);
  });

  it('rate_limited: 429 with the exact Retry-After given', async () => {
    const date = 'Mon, 02 Mar 2026 09:00:05 GMT';
    sim.control.setFaults({
      queue: [
        { kind: 'rate_limited', retryAfter: '2' },
        { kind: 'rate_limited', retryAfter: date },
      ],
    });
    const seconds = await get('/events');
    expect(seconds.status).toBe(429);
    expect(seconds.headers.get('retry-after')).toBe('2');
    const httpDate = await get('/events');
    expect(httpDate.status).toBe(429);
    expect(httpDate.headers.get('retry-after')).toBe(date);
  });

  it('drift outcomes without an endpoint wait for an endpoint they apply to', async () => {
    sim.control.setFaults({ queue: [{ kind: 'drift', variant: 'monthsAsStrings' }] });
    expect((await get('/events')).status).toBe(200);
    expect(sim.control.getFaults().queue).toHaveLength(1);
    const body = (await (await get(overviewPath())).json()) as {
      availability: { disabled_dates: { months: unknown[] } };
    };
    expect(body.availability.disabled_dates.months).toEqual(['8']);
    expect(sim.control.getFaults().queue).toHaveLength(0);
  });

  it('drift firstAvailableAsDateTime: a date-time with the guest zone offset', async () => {
    const plain = (await (await get(overviewPath())).json()) as {
      availability: { first_available_date: string };
    };
    expect(plain.availability.first_available_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    sim.control.setFaults({ queue: [{ kind: 'drift', variant: 'firstAvailableAsDateTime' }] });
    const drifted = (await (await get(overviewPath())).json()) as {
      availability: { first_available_date: string; last_available_date: string };
    };
    expect(drifted.availability.first_available_date).toBe(
      `${plain.availability.first_available_date}T00:00:00+01:00`,
    );
    expect(drifted.availability.last_available_date).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00\+0[12]:00$/);
  });
  it('drift datesInUtc: midnight in the guest zone as a UTC instant, dated the day before in Berlin', async () => {
    const plain = await overviewDates();
    sim.control.setFaults({ queue: [{ kind: 'drift', variant: 'datesInUtc' }] });
    const drifted = await overviewDates();
    expect(drifted.first).toBe(
      `${DateTime.fromISO(plain.first, { zone: 'Europe/Berlin' }).minus({ days: 1 }).toISODate()}T23:00:00Z`,
    );
    expect(drifted.last).toMatch(/^\d{4}-\d{2}-\d{2}T2[23]:00:00Z$/);
  });

  it('drift datesWithoutOffset: midnight as wall-clock time, without an offset', async () => {
    const plain = await overviewDates();
    sim.control.setFaults({ queue: [{ kind: 'drift', variant: 'datesWithoutOffset' }] });
    expect(await overviewDates()).toEqual({
      first: `${plain.first}T00:00:00`,
      last: `${plain.last}T00:00:00`,
    });
  });

  it('drift firstAvailableNull: the first date is null, the rest unchanged', async () => {
    const plain = (await (await get(overviewPath())).json()) as { availability: Record<string, unknown> };
    sim.control.setFaults({ queue: [{ kind: 'drift', variant: 'firstAvailableNull' }] });
    const drifted = (await (await get(overviewPath())).json()) as { availability: Record<string, unknown> };
    expect(drifted).toEqual({
      ...plain,
      availability: { ...plain.availability, first_available_date: null },
    });
  });

  it('drift zoneNotAsked: the overview names another zone than the one asked for', async () => {
    sim.control.setFaults({
      queue: [
        { kind: 'drift', variant: 'zoneNotAsked' },
        { kind: 'drift', variant: 'zoneNotAsked' },
      ],
    });
    expect(((await (await get(overviewPath())).json()) as { timezone: string }).timezone).toBe('UTC');
    const utcPath = overviewPath().replace('Europe/Berlin', 'UTC');
    expect(((await (await get(utcPath)).json()) as { timezone: string }).timezone).not.toBe('UTC');
  });
});

describe('fault settings', () => {
  it('invalidShapes makes every payload of every API endpoint fail a shape check', async () => {
    const paths: [string, string][] = [
      ['/events', '/events'],
      ['/users/me', '/users/me'],
      [overviewPath(), 'overview'],
      [slotsPath(), 'slots'],
    ];
    for (const [path, kind] of paths) {
      expect(VALID[kind]?.(await (await get(path)).json())).toBe(true);
    }
    sim.control.setFaults({ drift: { invalidShapes: true } });
    for (const [path, kind] of paths) {
      for (let i = 0; i < 6; i++) {
        const response = await get(path);
        expect(response.status).toBe(200);
        expect(VALID[kind]?.(await response.json())).toBe(false);
      }
    }
  });

  it('monthsAsStrings and firstAvailableAsDateTime as settings apply to every overview', async () => {
    sim.control.setFaults({ drift: { monthsAsStrings: true, firstAvailableAsDateTime: true } });
    for (let i = 0; i < 2; i++) {
      const body = (await (await get(overviewPath())).json()) as {
        availability: { disabled_dates: { months: unknown[] }; first_available_date: string };
      };
      expect(body.availability.disabled_dates.months).toEqual(['8']);
      expect(body.availability.first_available_date).toMatch(/T00:00:00\+01:00$/);
    }
  });

  it('with several date spellings on, every overview takes the first one', async () => {
    sim.control.setFaults({
      drift: { firstAvailableNull: true, datesInUtc: true, datesWithoutOffset: true },
    });
    for (let i = 0; i < 2; i++) {
      const dates = await overviewDates();
      expect(dates.first).toBeNull();
      expect(dates.last).toMatch(/Z$/);
    }
  });

  it('errorRate 1 alternates 500 and 503, limited by `only`, and never touches /__sim/', async () => {
    sim.control.setFaults({ errorRate: 1, only: ['GET /events'] });
    expect([(await get('/events')).status, (await get('/events')).status].sort()).toEqual([500, 503]);
    expect((await get('/users/me')).status).toBe(200);
    expect((await simHttp(sim, 'GET', '/users')).status).toBe(200);
  });

  it('malformedJsonRate 1 truncates every successful body, token responses included', async () => {
    sim.control.setFaults({ malformedJsonRate: 1 });
    const text = await (await get('/users/me')).text();
    expect(() => JSON.parse(text) as unknown).toThrow();
    const refresh = await tokenRequest(sim, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    });
    expect(refresh.status).toBe(200);
    const refreshText = await refresh.text();
    expect(refreshText).toMatch(/^\{"access_token":/);
    expect(() => JSON.parse(refreshText) as unknown).toThrow();
  });

  it('hangRate 1 hangs API and token requests alike', async () => {
    sim.control.setFaults({ hangRate: 1 });
    await expect(get('/events', { signal: AbortSignal.timeout(150) })).rejects.toThrow();
    const token = fetch(`${sim.authUrl}/oauth2/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'refresh_token' }),
      signal: AbortSignal.timeout(150),
    });
    await expect(token).rejects.toThrow();
  });

  it('latency delays the answer by at least latencyMs', async () => {
    sim.control.setFaults({ latencyMs: 120 });
    const started = performance.now();
    expect((await get('/events')).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(115);
  });

  it('rate limit per client: 429 with Retry-After seconds, cleared by moving the sim clock', async () => {
    sim.control.setFaults({ rateLimit: { requestsPerSecond: 2, retryAfter: 'seconds' } });
    const other = await connectUser(sim, 1); // the token request counts against the same client
    expect((await get('/events')).status).toBe(200);
    const limited = await apiGet(sim, '/users/me', other.access_token);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    sim.control.advanceClock(1);
    expect((await get('/events')).status).toBe(200);
  });

  it('rate limit with Retry-After as an HTTP-date on the sim clock', async () => {
    sim.control.setFaults({ rateLimit: { requestsPerSecond: 1, retryAfter: 'http-date' } });
    expect((await get('/events')).status).toBe(200);
    const limited = await get('/events');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('Mon, 02 Mar 2026 09:00:01 GMT');
  });

  it('PUT /__sim/faults merges nested settings and rejects unknown keys or endpoints', async () => {
    const put = await simHttp(sim, 'PUT', '/faults', { drift: { invalidShapes: true }, errorRate: 0.25 });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({
      errorRate: 0.25,
      drift: { invalidShapes: true, monthsAsStrings: false },
    });
    expect((await simHttp(sim, 'GET', '/faults')).json).toEqual(put.json);
    expect((await simHttp(sim, 'PUT', '/faults', { errorRat: 1 })).status).toBe(400);
    expect((await simHttp(sim, 'PUT', '/faults', { only: ['GET /nope'] })).status).toBe(400);
    expect((await simHttp(sim, 'PUT', '/faults', { errorRate: 2 })).status).toBe(400);
  });

  it('random faults are repeatable: the same seed gives the same sequence', async () => {
    const sequence = async (): Promise<number[]> => {
      const other = await startFixedSimulator({
        seed: 42,
        faults: { errorRate: 0.5, only: ['GET /users/me'] },
      });
      try {
        const t = await connectUser(other, 0);
        const statuses: number[] = [];
        for (let i = 0; i < 16; i++) statuses.push((await apiGet(other, '/users/me', t.access_token)).status);
        return statuses;
      } finally {
        await other.close();
      }
    };
    const first = await sequence();
    expect(await sequence()).toEqual(first);
    expect(first.some((s) => s >= 500)).toBe(true);
    expect(first).toContain(200);
  });
});

async function waitUntil(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!condition()) throw new Error('condition not reached');
}

describe('close()', () => {
  it('ends hanging and delayed requests instead of waiting for them', async () => {
    const doomed = await startFixedSimulator({ faults: { queue: [{ kind: 'hang' }] } });
    const outcome = (url: string) =>
      fetch(url).then(
        (r) => `answered ${r.status}`,
        () => 'connection closed',
      );
    const pending = outcome(`${doomed.baseUrl}/events`);
    const delayedSim = await startFixedSimulator({ faults: { latencyMs: 60_000 } });
    const delayed = outcome(`${delayedSim.baseUrl}/events`);
    // Both requests must be inside their servers, or close() would have nothing to cut short.
    await waitUntil(() => doomed.control.callCounts()['GET /events'] === 1);
    await waitUntil(() => delayedSim.control.callCounts()['GET /events'] === 1);
    await Promise.all([doomed.close(), delayedSim.close()]);
    expect(await pending).toBe('connection closed');
    expect(await delayed).toBe('connection closed');
    await doomed.close(); // idempotent
  });
});
