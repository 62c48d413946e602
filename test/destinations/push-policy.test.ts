// What a failed push leaves a destination in, from the CalDAV client's own errors for a server's answers.
import { describe, expect, it } from '@jest/globals';
import { caldavErrorFor, CalDavTimeoutError, CalDavUnreachableError } from '../../src/caldav/index.js';
import {
  backoffMs,
  failureOutcome,
  RETRY_AFTER_MAX_MS,
  RETRY_BASE_MS,
  RETRY_MAX_MS,
} from '../../src/destinations/push-policy.js';

const NOW = new Date('2026-03-02T09:00:00Z');
const request = { method: 'PUT', url: 'https://caldav.example.com/alice/free/a.ics' };
const answered = (status: number, headers: Record<string, string> = {}) =>
  caldavErrorFor(request, { status, headers: new Headers(headers), body: '' }, NOW);
const inSeconds = (date: Date | null) => (date === null ? null : (date.getTime() - NOW.getTime()) / 1000);

describe('failureOutcome', () => {
  it('credentials refused (401, 403): needs_credentials, and never retried by itself', () => {
    for (const status of [401, 403]) {
      const outcome = failureOutcome(answered(status), 1, NOW);
      expect(outcome).toMatchObject({ state: 'needs_credentials', cause: 'credentials', retryAt: null });
      expect(outcome.message).toMatch(/until the credentials are replaced/);
    }
  });

  it('429 and 503 wait as long as Retry-After says, capped; without one, the backoff', () => {
    expect(inSeconds(failureOutcome(answered(429, { 'retry-after': '120' }), 1, NOW).retryAt)).toBe(120);
    expect(inSeconds(failureOutcome(answered(503, { 'retry-after': '600' }), 5, NOW).retryAt)).toBe(600);
    expect(inSeconds(failureOutcome(answered(503, { 'retry-after': '9999999' }), 1, NOW).retryAt)).toBe(
      RETRY_AFTER_MAX_MS / 1000,
    );
    expect(failureOutcome(answered(503), 3, NOW)).toMatchObject({ state: 'failing', cause: 'retry_later' });
    expect(inSeconds(failureOutcome(answered(503), 3, NOW).retryAt)).toBe(backoffMs(3) / 1000);
  });

  it('no answer, a refused connection, a 5xx: failing, retried after a backoff that doubles up to its cap', () => {
    const timeout = failureOutcome(new CalDavTimeoutError(request, 20_000), 1, NOW);
    expect(timeout).toMatchObject({ state: 'failing', cause: 'timeout' });
    expect(inSeconds(timeout.retryAt)).toBe(RETRY_BASE_MS / 1000);
    const down = failureOutcome(new CalDavUnreachableError(request, 'ECONNREFUSED'), 2, NOW);
    expect(down).toMatchObject({ cause: 'unreachable' });
    expect(inSeconds(down.retryAt)).toBe((2 * RETRY_BASE_MS) / 1000);
    expect(failureOutcome(answered(500), 50, NOW)).toMatchObject({ state: 'failing', cause: 'other' });
    expect(inSeconds(failureOutcome(answered(500), 50, NOW).retryAt)).toBe(RETRY_MAX_MS / 1000);
  });

  it('a failure before the server (the feed could not be read) is retried like any, its cause "feed"', () => {
    const outcome = failureOutcome(new Error('Postgres went away'), 1, NOW);
    expect(outcome).toMatchObject({ state: 'failing', cause: 'feed' });
    expect(outcome.message).toContain('Postgres went away');
  });
});
