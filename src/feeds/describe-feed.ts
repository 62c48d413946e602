// The calendar's name and X-WR-CALDESC. They go into every render, so they may read only the connection
// columns declared in serve/feed-inputs.ts: a change to those moves the feed version and Last-Modified, so
// what the text says can never change behind an unchanged validator. (The last sync's outcome is not one of
// them: saying "the last sync failed" would change the bytes with no version to show for it.)
import { DateTime, IANAZone } from 'luxon';
import type { FeedView } from './feed-options.js';
import type { FeedConnectionState } from './serve/feed-inputs.js';

type Shown = Pick<FeedConnectionState, 'displayName' | 'email' | 'timezone' | 'status' | 'feedChangedAt'>;

export function feedCalendarName(o: Pick<Shown, 'displayName' | 'email'> & { eventTitle?: string }): string {
  const who = o.displayName?.trim() || o.email?.trim() || 'Calendbook';
  const title = o.eventTitle?.trim();
  return title ? `${who} – ${title} (free time)` : `${who} – free time`;
}

/** "every 15 minutes", "every hour", "every 2 hours". */
export function describeInterval(seconds: number): string {
  const minutes = Math.max(1, Math.round(seconds / 60));
  if (minutes === 1) return 'every minute';
  if (minutes % 60 !== 0) return `every ${minutes} minutes`;
  const hours = minutes / 60;
  return hours === 1 ? 'every hour' : `every ${hours} hours`;
}

function zoneOrUtc(zone: string | null): string {
  return zone && IANAZone.isValidZone(zone) ? zone : 'UTC';
}

const WHAT_IT_SHOWS: Record<FeedView, string> = {
  free: 'Free time',
  slots: 'Bookable times',
  busy: 'Busy time (bookings as seen by slotfeed)',
  'free+busy': 'Free and busy time',
};

export function describeFeed(o: {
  connection: Pick<Shown, 'displayName' | 'timezone' | 'status' | 'feedChangedAt'>;
  view: FeedView;
  refreshIntervalSeconds: number;
}): string {
  const { connection } = o;
  const who = connection.displayName?.trim();
  const zone = zoneOrUtc(connection.timezone);
  const changed = connection.feedChangedAt
    ? `Last changed ${DateTime.fromJSDate(connection.feedChangedAt, { zone }).toFormat('yyyy-MM-dd HH:mm')} (${zone})`
    : 'No data synced yet';
  const parts = [`${WHAT_IT_SHOWS[o.view]}${who ? ` of ${who}` : ''}, from Calendbook.`];
  if (connection.status === 'disabled') {
    parts.push(`${changed}. Syncing is turned off for this account: this feed is no longer updated.`);
  } else {
    parts.push(`${changed}; refreshed about ${describeInterval(o.refreshIntervalSeconds)}.`);
  }
  if (connection.status === 'needs_reauth') {
    parts.push('The account needs re-authorisation: reconnect it to keep this feed current.');
  }
  return parts.join(' ');
}
