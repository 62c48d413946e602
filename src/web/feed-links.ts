// The ways a feed URL is handed to people: the https URL itself, the webcal:// form that makes desktop and
// phone calendar apps offer to subscribe, and the "add by URL" pages of Google Calendar and Outlook.com.

export interface FeedLinks {
  https: string;
  webcal: string;
  google: string;
  outlook: string;
}

export function feedUrlOf(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/feeds/${encodeURIComponent(token)}.ics`;
}

export function feedLinksFor(publicBaseUrl: string, token: string, calendarName: string): FeedLinks {
  const https = feedUrlOf(publicBaseUrl, token);
  // webcal:// is the same URL with the scheme swapped; clients fetch it over https (or http for an http URL).
  const webcal = https.replace(/^https?:\/\//, 'webcal://');
  // Google's `cid` takes the webcal form; given an https URL it treats it as a calendar id, not a feed.
  const google = `https://calendar.google.com/calendar/render?cid=${encodeURIComponent(webcal)}`;
  const outlook =
    'https://outlook.live.com/calendar/0/addfromweb' +
    `?url=${encodeURIComponent(https)}&name=${encodeURIComponent(calendarName)}`;
  return { https, webcal, google, outlook };
}
