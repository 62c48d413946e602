// The calendar's name and X-WR-CALDESC. The description goes into every render, so it may only say things
// that move the feed version when they change (data change time, needs_reauth): mentioning the last sync time
// or a failed sync (neither moves the version) would change the bytes behind an unchanged strong ETag.
import { DateTime, IANAZone } from 'luxon';

export function feedCalendarName(o: {
  displayName: string | null;
  email: string | null;
  eventTitle?: string;
}): string {
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

export function describeFeed(o: {
  displayName: string | null;
  status: 'active' | 'needs_reauth' | 'disabled';
  feedChangedAt: Date | null;
  /** Deliberately not shown: a failed sync does not move the feed version (see the file comment). */
  lastSyncOutcome: 'succeeded' | 'failed' | null;
  zone: string | null;
  refreshIntervalSeconds: number;
}): string {
  const who = o.displayName?.trim();
  const zone = zoneOrUtc(o.zone);
  const asOf = o.feedChangedAt
    ? `Data as of ${DateTime.fromJSDate(o.feedChangedAt, { zone }).toFormat('yyyy-MM-dd HH:mm')} (${zone})`
    : 'No data synced yet';
  const parts = [
    `Free time${who ? ` of ${who}` : ''}, from Calendbook.`,
    `${asOf}; refreshed about ${describeInterval(o.refreshIntervalSeconds)}.`,
  ];
  if (o.status === 'needs_reauth') {
    parts.push('The account needs re-authorisation: reconnect it to keep this feed current.');
  }
  return parts.join(' ');
}
