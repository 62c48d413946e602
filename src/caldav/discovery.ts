// Where a person's calendars are, from the address they typed (RFC 6764, RFC 4791): that URL itself when it is a
// calendar, else /.well-known/caldav, the current user's principal and its calendar-home-set; never outside the
// site the password may go to (target-policy.ts's credentialScope).
import { fetchHomeUrl, fetchPrincipalUrl, serviceDiscovery, type DAVAccount, type DAVResponse } from 'tsdav';
import { asCalDavError, calendarOf, withSlash } from './dav-properties.js';
import { CalDavError, CalDavNotFoundError, CalDavTargetError } from './errors.js';
import { anotherSite } from './guarded-fetch.js';
import type { Fetch } from './http-transport.js';

/**
 * Errors that say the account or the network is at fault, not that this was the wrong place to look; so does any
 * retryable one (a 5xx: the server is failing, and asking it elsewhere only multiplies the requests).
 */
const DECISIVE = new Set(['credentials', 'timeout', 'unreachable', 'retry_later', 'target_refused']);

export interface Located {
  homeUrl: string | undefined;
  calendarUrl: string | undefined;
}

/**
 * Where the calendars are. The URL itself when it is a calendar; else RFC 6764: /.well-known/caldav (tsdav's
 * serviceDiscovery, which follows its redirect), then current-user-principal at the found root, the URL given, or
 * the server's root, then the principal's calendar-home-set. A refusal of the credentials, a timeout or an
 * unreachable server ends the search at once; "not here" tries the next place.
 */
export async function locate(
  serverUrl: string,
  fetch: Fetch,
  propfindCalendars: (url: string, depth: '0') => Promise<DAVResponse[]>,
  mayCarryCredentials: (url: URL) => boolean,
): Promise<Located> {
  try {
    const [calendar] = await propfindCalendars(serverUrl, '0');
    if (calendar) return { homeUrl: undefined, calendarUrl: calendarOf(calendar, serverUrl).url };
  } catch (thrown: unknown) {
    if (!(thrown instanceof CalDavError) || DECISIVE.has(thrown.code) || thrown.retryable) throw thrown;
  }
  const account: DAVAccount = { serverUrl, accountType: 'caldav' };
  const rootUrl = await serviceDiscovery({ account, fetch });
  // A /.well-known/caldav redirect to another site is not followed: the password stays with the server's own.
  const candidates = [...new Set([rootUrl, serverUrl, new URL('/', serverUrl).href])].filter((candidate) =>
    mayCarryCredentials(new URL(candidate)),
  );
  for (const candidate of candidates) {
    const at: DAVAccount = { ...account, rootUrl: candidate };
    let principalUrl: string;
    try {
      principalUrl = await fetchPrincipalUrl({ account: at, fetch });
    } catch (thrown: unknown) {
      if (thrown instanceof CalDavError && (DECISIVE.has(thrown.code) || thrown.retryable)) throw thrown;
      continue;
    }
    try {
      const homeUrl = await fetchHomeUrl({ account: { ...at, principalUrl }, fetch });
      if (!mayCarryCredentials(new URL(homeUrl))) throw new CalDavTargetError(anotherSite(new URL(homeUrl)));
      return { homeUrl: withSlash(homeUrl), calendarUrl: undefined };
    } catch (thrown: unknown) {
      throw asCalDavError(
        thrown,
        () =>
          new CalDavNotFoundError(`the principal ${principalUrl} names no calendar home (calendar-home-set)`),
      );
    }
  }
  throw new CalDavNotFoundError(
    `found no CalDAV service at ${serverUrl}: no current-user-principal at ${candidates.join(', ')}`,
  );
}
