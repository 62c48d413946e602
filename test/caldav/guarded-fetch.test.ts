// The CalDAV client's one door (guarded-fetch.ts): a request's time limit is the server's to use. A wait before
// the request (its host's rate, beforeRequest) does not count against it, so a request that waited its turn is
// still sent with its whole time limit, not found "timed out" before it left; and a request answered has no limit
// left to fire at the server's time (request-deadline.ts).
import { describe, expect, it } from '@jest/globals';
import { guardedFetch, type GuardSettings } from '../../src/caldav/guarded-fetch.js';
import type { Fetch } from '../../src/caldav/http-transport.js';

/** Resolves once a timer of `ms` has fired: set after the client's own, it fires after it. */
const longerThan = (ms: number) =>
  new Promise<void>((resolve) =>
    AbortSignal.timeout(ms * 20).addEventListener('abort', () => resolve(), { once: true }),
  );

/** The door over `transport` with a 5 ms time limit, to a loopback server that may be sent the password. */
const timeoutMs = 5;
const doorOver = (transport: Fetch, extra: Pick<GuardSettings, 'beforeRequest'> = {}) =>
  guardedFetch({
    transport,
    policy: { allowPrivateTargets: true },
    authorization: 'Basic dGVzdDp0ZXN0',
    mayCarryCredentials: () => true,
    timeoutMs,
    now: () => new Date('2026-03-02T09:00:00Z'),
    ...extra,
  });

describe('guardedFetch', () => {
  it('starts a request’s time limit once the wait before it is over', async () => {
    const signalsSent: boolean[] = [];
    // The network as a fetch sees it: a request whose signal is aborted already is never sent.
    const transport: Fetch = async (_url, init) => {
      signalsSent.push(init?.signal?.aborted ?? false);
      init?.signal?.throwIfAborted();
      return new Response('', { status: 200 });
    };
    // Its turn comes after longer than the time limit.
    const fetch = doorOver(transport, { beforeRequest: () => longerThan(timeoutMs) });
    const answer = await fetch('http://127.0.0.1:5232/calendars/', { method: 'PROPFIND' });
    expect(answer.status).toBe(200);
    expect(signalsSent).toEqual([false]);
  });

  it('lets a request’s time limit go once it is answered', async () => {
    const signals: AbortSignal[] = [];
    const transport: Fetch = async (_url, init) => {
      signals.push(init!.signal!);
      return new Response('', { status: 200 });
    };
    const fetch = doorOver(transport);
    await fetch('http://127.0.0.1:5232/calendars/', { method: 'PROPFIND' });
    // Past the limit: a limit still held would have aborted the answered request's signal by now.
    await longerThan(timeoutMs);
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(false);
  });
});
