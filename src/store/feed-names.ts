// A stored feed's calendar name as its bytes say it (describe-feed.ts), for the pages and commands that show a
// feed's links beside its name: the subscribe links carry the name a calendar app should give it.
import type { PrismaClient } from '../generated/prisma/client.js';
import { feedCalendarName, teamFeedCalendarName } from '../feeds/describe-feed.js';
import { DEFAULT_TEAM_MODE } from '../feeds/feed-options.js';
import { currentEventTitle } from './connection-admin.js';
import type { FeedRecord } from './feeds.js';

export interface FeedNameStore {
  /** The calendar name the feed's bytes carry: its team's, or its connection's (and event type's). */
  calendarName(
    feed: Pick<FeedRecord, 'connectionId' | 'teamId' | 'upstreamEventId' | 'options'>,
  ): Promise<string>;
}

export function createFeedNameStore(prisma: PrismaClient): FeedNameStore {
  return { calendarName: (feed) => storedFeedName(prisma, feed) };
}

async function storedFeedName(
  prisma: PrismaClient,
  feed: Pick<FeedRecord, 'connectionId' | 'teamId' | 'upstreamEventId' | 'options'>,
): Promise<string> {
  if (feed.teamId !== null) {
    const team = await prisma.team.findUniqueOrThrow({ where: { id: feed.teamId }, select: { name: true } });
    return teamFeedCalendarName({ teamName: team.name, mode: feed.options.mode ?? DEFAULT_TEAM_MODE });
  }
  const connectionId = feed.connectionId ?? '';
  const connection = await prisma.connection.findUniqueOrThrow({
    where: { id: connectionId },
    select: { displayName: true, email: true },
  });
  const eventTitle =
    feed.upstreamEventId === null
      ? undefined
      : await currentEventTitle(prisma, connectionId, feed.upstreamEventId);
  return feedCalendarName({
    displayName: connection.displayName,
    email: connection.email,
    ...(eventTitle === undefined ? {} : { eventTitle }),
  });
}
