// The calendar's name and X-WR-CALDESC. They go into every render, so they may read only the connection
// columns declared in feed-inputs.ts: a change to those moves the feed version and Last-Modified, so
// what the text says can never change behind an unchanged validator. (The last sync's outcome is not one of
// them: saying "the last sync failed" would change the bytes with no version to show for it.)
import { DateTime } from 'luxon';
import { isIanaZoneName } from '../lib/iana-zone.js';
import { durationLabel } from '../lib/duration-label.js';
import type { FeedView, TeamMode } from './feed-options.js';
import { memberName } from './team-feed-events.js';
import type { FeedConnectionState } from './feed-inputs.js';

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
  return zone && isIanaZoneName(zone) ? zone : 'UTC';
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

/** "Design – everyone free" or "Design – who is free". */
export function teamFeedCalendarName(o: { teamName: string; mode: TeamMode }): string {
  return `${o.teamName.trim()} – ${o.mode === 'all' ? 'everyone free' : 'who is free'}`;
}

type ShownMember = Pick<Shown, 'displayName' | 'status' | 'feedChangedAt'>;

const utcMinute = (at: Date) => `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * What a team feed shows, who is in it, and which members' free time is not current: a member whose account
 * needs re-authorisation (or whose syncing is off) keeps contributing what was last synced, and the
 * subscriber is told so. It reads only the team's and its members' declared inputs (feed-inputs.ts).
 */
export function describeTeamFeed(o: {
  teamName: string;
  mode: TeamMode;
  minimumMinutes: number;
  members: readonly ShownMember[];
  refreshIntervalSeconds: number;
}): string {
  const team = o.teamName.trim();
  const names = o.members.map((m) => memberName(m.displayName));
  const what =
    o.mode === 'all'
      ? `Times when everyone in ${team} is free, at least ${durationLabel(o.minimumMinutes)} at a time`
      : `Times when someone in ${team} is free, naming who`;
  const parts = [
    names.length === 0
      ? `${what}. The team has no members yet.`
      : `${what}, from Calendbook. Members: ${names.join(', ')}.`,
    `Refreshed about ${describeInterval(o.refreshIntervalSeconds)}.`,
  ];
  for (const [i, member] of o.members.entries()) {
    const since = member.feedChangedAt ? ` (last synced ${utcMinute(member.feedChangedAt)})` : '';
    if (member.feedChangedAt === null) {
      parts.push(`${names[i]}: nothing synced yet.`);
    } else if (member.status === 'needs_reauth') {
      parts.push(
        `${names[i]}'s account needs re-authorisation: their last synced free time is shown${since}.`,
      );
    } else if (member.status === 'disabled') {
      parts.push(`${names[i]}'s syncing is turned off: their last synced free time is shown${since}.`);
    }
  }
  return parts.join(' ');
}
