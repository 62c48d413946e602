import { describe, expect, it } from '@jest/globals';
import { createApiClient } from '../../src/upstream/api-client.js';
import type { ApiClientOptions, UpstreamEndpoint } from '../../src/upstream/api-client.js';
import {
  UpstreamAuthError,
  UpstreamInvalidPayloadError,
  UpstreamUnavailableError,
} from '../../src/upstream/errors.js';
import { upstreamFailure } from '../support/upstream-failure.js';

// Request shape and body handling, with fetch injected. The same behaviour over real sockets against the
// simulator is in api-client-simulator.test.ts.

interface Captured {
  url: URL;
  init: RequestInit;
}

function fakeFetch(respond: (url: URL, init: RequestInit) => Response | Promise<Response>) {
  const calls: Captured[] = [];
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    calls.push({ url, init: init ?? {} });
    return respond(url, init ?? {});
  }) as typeof fetch;
  return { fetchFn, calls };
}

function client(fetchFn: typeof fetch, extra: Partial<ApiClientOptions> = {}) {
  return createApiClient({
    baseUrl: 'https://api.example.test/v/',
    timeoutMs: 1000,
    slotsQuery: { dateParam: 'day', timezoneParam: 'tz' },
    fetch: fetchFn,
    now: () => new Date('2026-03-02T09:00:00Z'),
    ...extra,
  });
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

const slotList = { timezone: 'UTC', booking_type: 'single', slot_list: { '2026-03-02T09:00:00Z': {} } };

describe('api client requests', () => {
  it('sends the bearer token and Accept JSON, URL-encodes the event id and names the slots query', async () => {
    const { fetchFn, calls } = fakeFetch(() => json(slotList));
    const slots = await client(fetchFn).getSlots('tok-1', 'a/b c?', {
      date: '2026-03-02',
      timezone: 'Europe/Berlin',
    });
    expect(slots.starts).toEqual(['2026-03-02T09:00:00.000Z']);
    const [call] = calls;
    expect(call?.url.pathname).toBe('/v/calendars/a%2Fb%20c%3F/slots');
    expect(Object.fromEntries(call?.url.searchParams ?? [])).toEqual({
      day: '2026-03-02',
      tz: 'Europe/Berlin',
    });
    const headers = new Headers(call?.init.headers);
    expect(headers.get('authorization')).toBe('Bearer tok-1');
    expect(headers.get('accept')).toBe('application/json');
    expect(call?.init.method).toBe('GET');
    expect(call?.init.signal).toBeInstanceOf(AbortSignal);
  });

  it('refuses event ids that URL parsing would read as path steps', async () => {
    const { fetchFn, calls } = fakeFetch(() => json(slotList));
    const api = client(fetchFn);
    for (const id of ['', '.', '..']) {
      await expect(api.getSlots('t', id, { date: '2026-03-02', timezone: 'UTC' })).rejects.toThrow(TypeError);
    }
    expect(calls).toHaveLength(0);
  });

  it('sends start_date, timezone and period (only when given) to the overview', async () => {
    const { fetchFn, calls } = fakeFetch(() => json({}, 400));
    const api = client(fetchFn);
    await upstreamFailure(
      api.getOverview('t', 'ev', { startDate: '2026-03-02', timezone: 'UTC', period: '2w' }),
    );
    await upstreamFailure(api.getOverview('t', 'ev', { startDate: '2026-03-02', timezone: 'UTC' }));
    expect(calls.map((c) => c.url.search)).toEqual([
      '?start_date=2026-03-02&timezone=UTC&period=2w',
      '?start_date=2026-03-02&timezone=UTC',
    ]);
  });

  it('reports every call with its endpoint key, status and duration', async () => {
    const seen: [UpstreamEndpoint, { status?: number; ms: number }][] = [];
    const { fetchFn } = fakeFetch((url) => (url.pathname.endsWith('/events') ? json([]) : json({}, 503)));
    const api = client(fetchFn, { onCall: (endpoint, outcome) => seen.push([endpoint, outcome]) });
    await api.listEventTypes('t');
    await upstreamFailure(api.getProfile('t'));
    expect(seen.map(([e, o]) => [e, o.status])).toEqual([
      ['GET /events', 200],
      ['GET /users/me', 503],
    ]);
    expect(seen.every(([, o]) => o.ms >= 0)).toBe(true);
  });

  it('refuses to send an empty or unsendable token, without quoting it', async () => {
    const { fetchFn, calls } = fakeFetch(() => json([]));
    const api = client(fetchFn);
    const error = await upstreamFailure(api.listEventTypes('abc\r\nX-Injected: 1'));
    expect(error).toBeInstanceOf(UpstreamAuthError);
    expect(error.message).not.toContain('Injected');
    expect(await upstreamFailure(api.listEventTypes(''))).toBeInstanceOf(UpstreamAuthError);
    expect(calls).toHaveLength(0);
  });
});

describe('api client bodies', () => {
  it('cancels a body larger than maxBodyBytes and reports invalid_payload', async () => {
    let pulled = 0;
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(1024).fill(0x20));
      },
      cancel() {
        cancelled = true;
      },
    });
    const { fetchFn } = fakeFetch(() => new Response(endless, { status: 200 }));
    const error = await upstreamFailure(client(fetchFn, { maxBodyBytes: 10 * 1024 }).listEventTypes('t'));
    expect(error).toBeInstanceOf(UpstreamInvalidPayloadError);
    expect((error as UpstreamInvalidPayloadError).path).toBe('(body)');
    expect(error.retryable).toBe(false);
    expect(cancelled).toBe(true);
    expect(pulled).toBeLessThan(20);
  });

  it('rejects a declared Content-Length over the limit without reading the body', async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(10));
      },
    });
    const { fetchFn } = fakeFetch(
      () => new Response(body, { headers: { 'content-length': String(6 * 1024 * 1024) } }),
    );
    const error = await upstreamFailure(client(fetchFn).listEventTypes('t'));
    expect(error).toBeInstanceOf(UpstreamInvalidPayloadError);
    expect(error.message).toContain(`${5 * 1024 * 1024} bytes`);
    expect(pulled).toBeLessThanOrEqual(1);
  });

  it('treats a 200 that is not JSON as a retryable invalid_payload', async () => {
    const { fetchFn } = fakeFetch(() => new Response('{"timezone": "UT', { status: 200 }));
    const error = await upstreamFailure(client(fetchFn).getProfile('t'));
    expect(error).toBeInstanceOf(UpstreamInvalidPayloadError);
    expect(error.retryable).toBe(true);
  });

  it('maps a non-JSON 400 body to bad_request with a sanitized excerpt', async () => {
    const { fetchFn } = fakeFetch(() => new Response('period tok-secret-1 is too long', { status: 400 }));
    const error = await upstreamFailure(
      client(fetchFn).getOverview('tok-secret-1', 'ev', {
        startDate: '2026-03-02',
        timezone: 'UTC',
        period: '9m',
      }),
    );
    expect(error.code).toBe('bad_request');
    expect(error.message).toBe('GET /calendars/{event_id} answered 400: period [redacted] is too long');
  });
});

describe('api client failures before an answer', () => {
  it('turns its own timeout into unavailable/timeout', async () => {
    // A fetch that never answers, except by honouring the abort signal as undici does.
    const hanging = (async (_input: string | URL | Request, init?: RequestInit) =>
      new Promise<Response>((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
      })) as typeof fetch;
    const error = await upstreamFailure(client(hanging, { timeoutMs: 20 }).listEventTypes('t'));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect((error as UpstreamUnavailableError).cause).toBe('timeout');
  });

  it('lets a call’s time limit go once its answer is read', async () => {
    const { fetchFn, calls } = fakeFetch(() => json(slotList));
    await client(fetchFn, { timeoutMs: 5 }).getSlots('tok-1', 'ev', { date: '2026-03-02', timezone: 'UTC' });
    // A timer set after the call's limit, and longer: a limit still held would have aborted the signal by now.
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(calls).toHaveLength(1);
    expect(calls[0]!.init.signal!.aborted).toBe(false);
  });

  it('turns a connection failure into unavailable/network with the system error code', async () => {
    const refused = (async () => {
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }),
      });
    }) as typeof fetch;
    const error = (await upstreamFailure(client(refused).listEventTypes('t'))) as UpstreamUnavailableError;
    expect(error.cause).toBe('network');
    expect(error.detail).toBe('ECONNREFUSED');
    expect(error.retryable).toBe(true);
  });

  it("rethrows the caller's own abort as is", async () => {
    const controller = new AbortController();
    const hanging = (async (_input: string | URL | Request, init?: RequestInit) =>
      new Promise<Response>((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
      })) as typeof fetch;
    const call = client(hanging, { signal: controller.signal }).listEventTypes('t');
    controller.abort(new Error('shutting down'));
    await expect(call).rejects.toThrow('shutting down');
  });
});
