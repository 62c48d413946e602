// The sentences the pages (and the CLI) give for a CalDAV destination that could not be added: each names what
// to do, never the operator's setting names or the client's request line.
import { describe, expect, it } from '@jest/globals';
import {
  CalDavCredentialsError,
  CalDavHeldBackError,
  CalDavRequestError,
  CalDavRetryLaterError,
  openCalDavAccount,
} from '../../src/caldav/index.js';
import { InvalidDestinationError } from '../../src/destinations/caldav-destinations-service.js';
import { caldavFailureOf } from '../../src/web/caldav/caldav-failure.js';

const refusal = (serverUrl: string) =>
  openCalDavAccount({ serverUrl, username: 'ada', password: 'secret' }).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );

describe('caldavFailureOf', () => {
  it('a private address, refused by the target policy, asks for the server’s public address', async () => {
    expect(caldavFailureOf(await refusal('http://192.168.1.20:5232/'))).toEqual({
      status: 400,
      sentence:
        'slotfeed refused that address: it is a private, loopback or link-local one (a server inside this network). Give the server’s public https address.',
    });
  });

  it('an address that is not a URL, or plain http to a public host, says what was wrong with it', async () => {
    expect(caldavFailureOf(await refusal('caldav.example.com'))?.sentence).toBe(
      'slotfeed refused that address: Not a URL: give the full address, e.g. https://caldav.example.com/.',
    );
    expect(caldavFailureOf(await refusal('http://caldav.example.com/'))?.sentence).toMatch(
      /^slotfeed refused that address: .*over http the password would travel in clear\.$/,
    );
  });

  it('credentials refused say where an app password comes in; another answer names its status', () => {
    const request = { method: 'PROPFIND', url: 'https://caldav.example.com/' };
    expect(caldavFailureOf(new CalDavCredentialsError('refused', { request, status: 401 }))).toMatchObject({
      status: 400,
      sentence: expect.stringContaining('need an app password made for slotfeed'),
    });
    expect(caldavFailureOf(new CalDavRequestError('x', { request, status: 500 }))).toEqual({
      status: 502,
      sentence: 'The server answered with an error (HTTP 500): is this the address of a CalDAV server?',
    });
  });

  it('a server that asked to wait says for how long, at once (503, not "could not be reached")', () => {
    const request = { method: 'PROPFIND', url: 'https://caldav.example.com/' };
    expect(
      caldavFailureOf(new CalDavRetryLaterError('x', { request, status: 503, retryAfterMs: 75_000 })),
    ).toEqual({
      status: 503,
      sentence: 'The server is busy and asked slotfeed to wait 75 seconds: try again after that.',
    });
    expect(caldavFailureOf(new CalDavHeldBackError('caldav.example.com', 6 * 3600_000))?.sentence).toBe(
      'The server is busy and asked slotfeed to wait 6 hours: try again after that.',
    );
    expect(
      caldavFailureOf(new CalDavRetryLaterError('x', { request, status: 429, retryAfterMs: undefined })),
    ).toEqual({
      status: 503,
      sentence: 'The server is busy and asked to be called later: try again in a few minutes.',
    });
  });

  it('a form left incomplete is its own sentence; anything else is not a failure to explain', () => {
    expect(caldavFailureOf(new InvalidDestinationError('a user name is required'))).toEqual({
      status: 400,
      sentence: 'A user name is required.',
    });
    expect(caldavFailureOf(new TypeError('a bug'))).toBeUndefined();
  });
});
