// What one team feed shows, read from the snapshots: the team and its members' declared state, and each
// member's free time in the window, from the open slots of the event types their own default feed would
// show (enabled, not secret). A member whose account needs re-authorisation has kept its last good snapshot
// in the store, so it contributes that. One REPEATABLE READ transaction, as for a person's feed
// (feed-content.ts): the bytes and the cache key must come from the same moment.
import type { PrismaClient } from '../generated/prisma/client.js';
import { Prisma } from '../generated/prisma/client.js';
import { TeamNotFoundError } from '../store/teams.js';
import type { FeedRecord } from '../store/feeds.js';
import { usableFreeBlocks } from '../feeds/feed-events.js';
import { includedEventIds, type FeedSlot } from '../feeds/feed-model.js';
import type { TeamMemberTime } from '../feeds/team-availability.js';
import { memberName } from '../feeds/team-feed-events.js';
import { eventTypesById, FEED_EVENT_TYPE_COLUMNS, FEED_SLOT_COLUMNS, feedSlotOf } from './feed-content.js';
import { FEED_TEAM_INPUTS, teamStateOf, type FeedTeamState } from './feed-inputs.js';
import { feedWindow, type FeedWindow } from './feed-window.js';

/** A team spans zones: its window runs from today's start in UTC. */
export const TEAM_FEED_ZONE = 'UTC';

export interface TeamFeedContent extends FeedWindow {
  team: FeedTeamState;
  /** Every member, in the team's fixed order, with their free time in the window. */
  members: TeamMemberTime[];
}

export async function readTeamFeedContent(
  prisma: PrismaClient,
  feed: Pick<FeedRecord, 'teamId' | 'options'>,
  settings: { now: Date; defaultDays: number; window?: FeedWindow },
): Promise<TeamFeedContent> {
  const teamId = feed.teamId ?? '';
  return prisma.$transaction(
    async (tx) => {
      const row = await tx.team.findUnique({ where: { id: teamId }, select: FEED_TEAM_INPUTS });
      if (!row) throw new TeamNotFoundError(teamId);
      const team = teamStateOf(row);
      const window =
        settings.window ??
        feedWindow(settings.now, TEAM_FEED_ZONE, feed.options.days ?? settings.defaultDays);
      const memberIds = team.members.map((m) => m.id);
      // One after the other: an interactive transaction runs its queries on one connection anyway.
      const eventTypeRows =
        memberIds.length === 0
          ? []
          : await tx.eventType.findMany({
              where: { connectionId: { in: memberIds }, validTo: null },
              orderBy: [{ upstreamEventId: 'asc' }, { id: 'asc' }],
              select: { connectionId: true, ...FEED_EVENT_TYPE_COLUMNS },
            });
      const slotRows =
        memberIds.length === 0
          ? []
          : await tx.slot.findMany({
              where: {
                connectionId: { in: memberIds },
                goneAt: null,
                startsAt: { gte: window.windowStart, lt: window.windowEnd },
              },
              orderBy: [{ startsAt: 'asc' }, { upstreamEventId: 'asc' }, { id: 'asc' }],
              select: { connectionId: true, ...FEED_SLOT_COLUMNS },
            });
      const members = team.members.map((member): TeamMemberTime => {
        const eventTypes = eventTypesById(eventTypeRows.filter((row) => row.connectionId === member.id));
        const included = includedEventIds(eventTypes, null);
        const slots: FeedSlot[] = slotRows
          .filter((slot) => slot.connectionId === member.id && included.has(slot.upstreamEventId))
          .map(({ connectionId: _owner, ...slot }) => feedSlotOf(slot));
        return {
          id: member.id,
          name: memberName(member.displayName),
          blocks: usableFreeBlocks({ eventTypes, slots }),
        };
      });
      return { team, members, ...window };
    },
    { isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead },
  );
}
