// The ways a feed URL is handed to people: the https URL itself, the webcal:// form that makes desktop and
// phone calendar apps offer to subscribe, and the "add by URL" pages of Google Calendar and Outlook.com.

export interface FeedLinks {
  https: string;
  webcal: string;
  google: string;
  /** Outlook.com: personal Microsoft accounts. */
  outlook: string;
  /** Outlook on the web for work and school accounts (Microsoft 365). */
  microsoft365: string;
}

export function feedUrlOf(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/feeds/${encodeURIComponent(token)}.ics`;
}

export function feedLinksFor(publicBaseUrl: string, token: string, calendarName: string): FeedLinks {
  return feedLinksForUrl(feedUrlOf(publicBaseUrl, token), calendarName);
}

/** The same for any feed URL (a share link's feed, share/). */
export function feedLinksForUrl(https: string, calendarName: string): FeedLinks {
  // webcal:// is the same URL with the scheme swapped; clients fetch it over https (or http for an http URL).
  const webcal = https.replace(/^https?:\/\//, 'webcal://');
  // Google's `cid` takes the webcal form; given an https URL it treats it as a calendar id, not a feed.
  const google = `https://calendar.google.com/calendar/render?cid=${encodeURIComponent(webcal)}`;
  // Outlook's two front doors take the same query: personal accounts, and work or school ones.
  const addFromWeb = `/calendar/0/addfromweb?url=${encodeURIComponent(https)}&name=${encodeURIComponent(calendarName)}`;
  return {
    https,
    webcal,
    google,
    outlook: `https://outlook.live.com${addFromWeb}`,
    microsoft365: `https://outlook.office.com${addFromWeb}`,
  };
}

/**
 * True when PUBLIC_BASE_URL names this machine (localhost, 127.0.0.0/8, ::1): a desktop calendar on the same
 * machine can subscribe, but Google's and Microsoft's servers, which fetch feeds themselves, cannot.
 */
export function isLoopbackBaseUrl(publicBaseUrl: string): boolean {
  let host: string;
  try {
    host = new URL(publicBaseUrl).hostname.toLowerCase();
  } catch {
    return false;
  }
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^127(?:\.\d{1,3}){3}$/.test(host) ||
    host === '[::1]' ||
    host === '::1'
  );
}
