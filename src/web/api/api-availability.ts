// The JSON API's answers, computed from what the feeds read (feed-content.ts, team-feed-content.ts) over the
// range asked for: the same free blocks, slots, busy time and team maths as the feeds, shaped as data, read
// within the credential's scope (api-scope.ts).
import { DateTime } from 'luxon';
import type { z } from 'zod';
import { busyBlocks } from '../../feeds/busy-blocks.js';
import { usableFreeBlocks } from '../../feeds/feed-events.js';
import { readFeedContent } from '../../serving/feed-content.js';
import { feedWindow, type FeedWindow } from '../../serving/feed-window.js';
import { readTeamFeedContent, TEAM_FEED_ZONE } from '../../serving/team-feed-content.js';
import { allFree, anyFree } from '../../feeds/team-availability.js';
import { memberName } from '../../feeds/team-feed-events.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { currentEventTypes } from '../../store/connection-admin.js';
import { ConnectionNotFoundError } from '../../store/connections.js';
import { HttpError } from '../http-error.js';
import type { ApiScope, TeamView } from './api-scope.js';
import { MAX_RANGE_DAYS, type availabilityResponse, type teamAvailabilityResponse } from './api-schemas.js';

export interface ApiRange extends FeedWindow {
  zone: string;
  from: string;
  to: string;
  /** The start of today in the zone: the default range moves then, with no write at all. */
  todayStart: Date;
}

/** The range asked for, in whole days of `zone`; 400 when it is backwards or longer than a year. */
export function rangeOf(
  query: { from?: string | undefined; to?: string | undefined },
  zone: string,
  now: Date,
): ApiRange {
  const today = DateTime.fromJSDate(now, { zone }).startOf('day');
  const from = query.from === undefined ? today : DateTime.fromISO(query.from, { zone }).startOf('day');
  const to =
    query.to === undefined ? from.plus({ days: 6 }) : DateTime.fromISO(query.to, { zone }).startOf('day');
  if (!from.isValid || !to.isValid) throw new HttpError(400, '`from` and `to` must be dates, YYYY-MM-DD.');
  const days = Math.round(to.diff(from, 'days').days) + 1;
  if (days < 1) throw new HttpError(400, '`to` is before `from`.');
  if (days > MAX_RANGE_DAYS)
    throw new HttpError(400, `A range covers at most ${MAX_RANGE_DAYS} days; ask in parts.`);
  const fromDate = from.toISODate()!;
  const toDate = to.toISODate()!;
  return {
    zone,
    from: fromDate,
    to: toDate,
    windowStart: from.toJSDate(),
    windowEnd: to.plus({ days: 1 }).toJSDate(),
    windowKey: `${fromDate}/${toDate}/${zone}`,
    todayStart: today.toJSDate(),
  };
}

const inZone = (zone: string) => (date: Date) => DateTime.fromJSDate(date, { zone }).toISO()!;

/** The range asked for, cut to the days a feed's token may read (from the start of today in `zone`). */
function withinDays(range: ApiRange, days: number | null, zone: string | null, now: Date): FeedWindow {
  if (days === null) return range;
  const shown = feedWindow(now, zone, days);
  const windowStart = new Date(Math.max(range.windowStart.getTime(), shown.windowStart.getTime()));
  const windowEnd = new Date(
    Math.max(windowStart.getTime(), Math.min(range.windowEnd.getTime(), shown.windowEnd.getTime())),
  );
  return { windowStart, windowEnd, windowKey: `${range.windowKey}/${shown.windowKey}` };
}

export async function connectionAvailability(
  prisma: PrismaClient,
  input: {
    connectionId: string;
    scope: ApiScope;
    /** The `eventType` asked for, if any. */
    eventType: string | undefined;
    range: (zone: string | null) => ApiRange;
    now: Date;
  },
): Promise<{ body: z.input<typeof availabilityResponse>; changedAt: Date | null; range: ApiRange }> {
  const { scope } = input;
  // The zone may default to the account's: the range is settled once it is known.
  const account = await prisma.connection.findUnique({
    where: { id: input.connectionId },
    select: { timezone: true },
  });
  if (!account) throw new ConnectionNotFoundError(input.connectionId);
  const eventType = scope.eventTypeFor(input.eventType, await currentEventTypes(prisma, input.connectionId));
  const range = input.range(account.timezone);
  const content = await readFeedContent(
    prisma,
    {
      connectionId: input.connectionId,
      upstreamEventId: eventType,
      options: { view: scope.parts.busy ? 'free+busy' : 'free' },
    },
    {
      now: input.now,
      defaultDays: 1,
      window: withinDays(range, scope.days, account.timezone, input.now),
    },
  );
  const at = inZone(range.zone);
  const free = usableFreeBlocks({ eventTypes: content.eventTypes, slots: content.slots });
  return {
    range,
    changedAt: content.connection.feedChangedAt,
    body: {
      connectionId: content.connection.id,
      zone: range.zone,
      from: range.from,
      to: range.to,
      status: content.connection.status,
      lastChanged: content.connection.feedChangedAt?.toISOString() ?? null,
      free: scope.parts.free
        ? free.map((b) => ({ start: at(b.startsAt), end: at(b.endsAt), eventTypes: [...b.eventIds].sort() }))
        : [],
      slots: scope.parts.slots
        ? content.slots
            .filter((s) => s.endsAt.getTime() > s.startsAt.getTime())
            .map((s) => ({ start: at(s.startsAt), end: at(s.endsAt), eventType: s.eventId }))
        : [],
      busy: scope.parts.busy
        ? busyBlocks(content.bookings, free).map((b) => ({ start: at(b.startsAt), end: at(b.endsAt) }))
        : [],
    },
  };
}

export async function teamAvailability(
  prisma: PrismaClient,
  input: { teamId: string; view: TeamView; days: number | null; range: ApiRange; now: Date },
): Promise<{ body: z.input<typeof teamAvailabilityResponse>; changedAt: Date }> {
  const { range, view } = input;
  const content = await readTeamFeedContent(
    prisma,
    { teamId: input.teamId, options: { mode: view.mode } },
    { now: input.now, defaultDays: 1, window: withinDays(range, input.days, TEAM_FEED_ZONE, input.now) },
  );
  const at = inZone(range.zone);
  const blocks =
    view.minimumMinutes !== null
      ? allFree(content.members, { minimumMinutes: view.minimumMinutes })
      : anyFree(content.members);
  const changes = [
    content.team.membersChangedAt,
    ...content.team.members.flatMap((m) => (m.feedChangedAt ? [m.feedChangedAt] : [])),
  ];
  return {
    changedAt: new Date(Math.max(...changes.map((d) => d.getTime()))),
    body: {
      teamId: content.team.id,
      name: content.team.name,
      zone: range.zone,
      from: range.from,
      to: range.to,
      mode: view.mode,
      minimumMinutes: view.minimumMinutes,
      members: content.team.members.map((m) => ({
        name: memberName(m.displayName),
        status: m.status,
        lastChanged: m.feedChangedAt?.toISOString() ?? null,
      })),
      blocks: blocks.map((b) => ({
        start: at(b.startsAt),
        end: at(b.endsAt),
        free: b.free.map((m) => m.name),
      })),
    },
  };
}
