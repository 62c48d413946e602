// How a CalDAV server's answer becomes one of the client's typed errors: what a push job switches on.
import { describe, expect, it } from '@jest/globals';
import {
  CalDavCredentialsError,
  CalDavNotFoundError,
  CalDavNotSupportedError,
  CalDavPreconditionError,
  CalDavUidConflictError,
  CalDavRequestError,
  CalDavRetryLaterError,
  caldavErrorFor,
} from '../../src/caldav/index.js';

const NOW = new Date('2026-03-02T09:00:00Z');
const URL_ = 'https://caldav.example.com/alice/calendar/free-1.ics';

function answer(method: string, status: number, headers: Record<string, string> = {}, body = '') {
  return caldavErrorFor({ method, url: URL_ }, { status, headers: new Headers(headers), body }, NOW);
}

describe('caldavErrorFor', () => {
  it('401 and a 403 without a named condition: the credentials were refused', () => {
    for (const status of [401, 403]) {
      const error = answer('PROPFIND', status);
      expect(error).toBeInstanceOf(CalDavCredentialsError);
      expect(error).toMatchObject({ code: 'credentials', status, retryable: false });
      expect(error.message).toContain(`PROPFIND ${URL_} answered ${status}`);
    }
  });

  it('403 naming a missing privilege is the credentials error too (a read-only calendar)', () => {
    const body =
      '<?xml version="1.0"?><d:error xmlns:d="DAV:"><d:need-privileges><d:resource>' +
      '<d:href>/alice/calendar/</d:href><d:privilege><d:write/></d:privilege></d:resource></d:need-privileges></d:error>';
    const error = answer('PUT', 403, {}, body);
    expect(error).toBeInstanceOf(CalDavCredentialsError);
    expect(error.message).toContain('need-privileges');
  });

  it('412: a precondition failed', () => {
    expect(answer('PUT', 412)).toBeInstanceOf(CalDavPreconditionError);
  });

  it('a UID another event already has, as RFC 4791 lets a server say it (403 or 409 naming no-uid-conflict, or 409 alone): the UID clash, not a failure to retry', () => {
    const conflict =
      '<error xmlns="DAV:"><no-uid-conflict xmlns="urn:ietf:params:xml:ns:caldav"><href>/a/b.ics</href></no-uid-conflict></error>';
    for (const error of [
      answer('PUT', 403, {}, conflict),
      answer('PUT', 409, {}, conflict),
      answer('PUT', 409),
    ]) {
      expect(error).toBeInstanceOf(CalDavUidConflictError);
      expect(error).toMatchObject({ code: 'uid_conflict', retryable: false });
    }
    expect(answer('PUT', 409, {}, conflict).condition).toBe('no-uid-conflict');
  });

  it('403 naming another condition (data the server refuses): the request was refused, not the password', () => {
    const body =
      '<D:error xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><C:valid-calendar-data/></D:error>';
    const error = answer('PUT', 403, {}, body);
    expect(error).toBeInstanceOf(CalDavRequestError);
    expect(error).toMatchObject({ code: 'other', condition: 'valid-calendar-data', status: 403 });
  });

  it('429 and 503: retry later, after Retry-After in seconds or as an HTTP date', () => {
    const seconds = answer('REPORT', 429, { 'retry-after': '120' });
    expect(seconds).toBeInstanceOf(CalDavRetryLaterError);
    expect(seconds).toMatchObject({
      code: 'retry_later',
      status: 429,
      retryAfterMs: 120_000,
      retryable: true,
    });
    const dated = answer('PUT', 503, { 'retry-after': 'Mon, 02 Mar 2026 09:00:30 GMT' });
    expect(dated).toMatchObject({ code: 'retry_later', status: 503, retryAfterMs: 30_000 });
    expect(dated.message).toContain('retry after 30 s');
    const unreadable = answer('PUT', 503, { 'retry-after': 'soon' });
    expect(unreadable).toMatchObject({ code: 'retry_later', retryAfterMs: undefined });
    expect(answer('PUT', 503)).toMatchObject({ code: 'retry_later', retryAfterMs: undefined });
  });

  it('404 and 410: not found', () => {
    for (const status of [404, 410]) {
      expect(answer('DELETE', status)).toBeInstanceOf(CalDavNotFoundError);
      expect(answer('DELETE', status)).toMatchObject({ code: 'not_found', status, retryable: false });
    }
  });

  it('MKCALENDAR refused (403, 405, 501): not supported here', () => {
    for (const status of [403, 405, 501]) {
      const error = answer('MKCALENDAR', status);
      expect(error).toBeInstanceOf(CalDavNotSupportedError);
      expect(error.message).toMatch(/does not let this account create a calendar/);
    }
  });

  it('anything else: the request error with its status; 5xx other than 503 may succeed later', () => {
    expect(answer('PUT', 415)).toMatchObject({ code: 'other', status: 415, retryable: false });
    expect(answer('PUT', 500)).toMatchObject({ code: 'other', status: 500, retryable: true });
    expect(answer('PUT', 502)).toMatchObject({ code: 'other', status: 502, retryable: true });
  });

  it('never repeats the body: only the name of a condition it carries', () => {
    const body = '<html>Authorization: Basic YWxpY2U6c2VjcmV0 secret</html>';
    const error = answer('PUT', 400, {}, body);
    expect(error.message).not.toContain('YWxpY2U6c2VjcmV0');
    expect(error.message).not.toContain('secret');
  });
});
