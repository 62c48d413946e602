// Why adding a CalDAV destination (or replacing its credentials) failed, as one sentence for the person at the
// form, and the status the page answers with: 400 when what was typed must change (the credentials, the
// address), 502/503 when the server failed and the same form may work later. The CalDAV client's messages name
// the request and its URL for operators and logs; a person at the form needs to know what to do instead.
import {
  CalDavCredentialsError,
  CalDavError,
  CalDavNotFoundError,
  CalDavNotSupportedError,
  CalDavRetryLaterError,
  CalDavHeldBackError,
  CalDavTargetError,
  CalDavTimeoutError,
  CalDavUnreachableError,
  PRIVATE_CALDAV_TARGET_REFUSED,
} from '../../caldav/index.js';
import { InvalidDestinationError } from '../../destinations/caldav-destinations-service.js';
import { CalendarTakenError } from '../../store/caldav-destinations.js';
import { asSentence } from '../http-error.js';

export interface CaldavFailure {
  status: 400 | 502 | 503;
  sentence: string;
}

export const CREDENTIALS_REFUSED =
  'The server refused this user name and password. Check them: most providers (iCloud, Fastmail, mailbox.org, Nextcloud with two-factor sign-in …) need an app password made for slotfeed, not your usual password.';

/** A server's wait as a person reads it: seconds under two minutes, then minutes, then hours (rounded up). */
function waitFor(ms: number): string {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  if (seconds < 120) return `${seconds} seconds`;
  const minutes = Math.ceil(seconds / 60);
  return minutes < 120 ? `${minutes} minutes` : `${Math.ceil(minutes / 60)} hours`;
}

/** The sentence for a failure the person can act on; undefined for anything else (a bug: a 500, logged). */
export function caldavFailureOf(thrown: unknown): CaldavFailure | undefined {
  if (thrown instanceof InvalidDestinationError || thrown instanceof CalendarTakenError) {
    return { status: 400, sentence: asSentence(thrown.message) };
  }
  if (!(thrown instanceof CalDavError)) return undefined;
  if (thrown instanceof CalDavCredentialsError) return { status: 400, sentence: CREDENTIALS_REFUSED };
  if (thrown instanceof CalDavTargetError) {
    // The policy's own words name the operator's setting: the person needs to know what to give instead.
    return {
      status: 400,
      sentence: thrown.message.includes(PRIVATE_CALDAV_TARGET_REFUSED)
        ? 'slotfeed refused that address: it is a private, loopback or link-local one (a server inside this network). Give the server’s public https address.'
        : `slotfeed refused that address: ${asSentence(thrown.message)}`,
    };
  }
  if (thrown instanceof CalDavNotFoundError) {
    return {
      status: 400,
      sentence:
        'No CalDAV server was found at that address. Check the server’s address (your provider’s help names it, e.g. https://caldav.fastmail.com/), or give the address of the calendar itself.',
    };
  }
  if (thrown instanceof CalDavNotSupportedError) {
    return {
      status: 400,
      sentence:
        'The server does not let slotfeed create a calendar there. Create one in your calendar app and give its name (or its own address) here.',
    };
  }
  if (thrown instanceof CalDavUnreachableError || thrown instanceof CalDavTimeoutError) {
    return {
      status: 502,
      sentence:
        'The server could not be reached (no connection, or no answer in time). Check its address, or try again later.',
    };
  }
  if (thrown instanceof CalDavRetryLaterError || thrown instanceof CalDavHeldBackError) {
    const waitMs = thrown instanceof CalDavRetryLaterError ? thrown.retryAfterMs : thrown.retryInMs;
    return {
      status: 503,
      sentence:
        waitMs === undefined
          ? 'The server is busy and asked to be called later: try again in a few minutes.'
          : `The server is busy and asked slotfeed to wait ${waitFor(waitMs)}: try again after that.`,
    };
  }
  return {
    status: 502,
    sentence: `The server answered with an error${thrown.status === undefined ? '' : ` (HTTP ${thrown.status})`}: is this the address of a CalDAV server?`,
  };
}
