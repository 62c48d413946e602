// A team feed's events, from its members' free time, as plain data (no I/O): the team maths
// (team-availability.ts) decides the blocks, this names them. Members are named by display name only; a
// member without one is "a member without a name", never their e-mail address.
import type { FeedEvent } from './feed-model.js';
import type { TeamMode } from './feed-options.js';
import type { PlannedFeed } from './feed-events.js';
import { sanitizeText } from './ics-text.js';
import { teamBlockUid } from './slot-uid.js';
import { allFree, anyFree, type TeamBlock, type TeamMemberTime } from './team-availability.js';

export const EVERYONE_FREE_SUMMARY = 'Everyone free';
export const UNNAMED_MEMBER = 'a member without a name';

/** What a team feed calls a member. */
export const memberName = (displayName: string | null): string =>
  sanitizeText(displayName?.trim() || '') || UNNAMED_MEMBER;

export interface TeamFeedEventsInput {
  teamId: string;
  mode: TeamMode;
  /** `all`: pieces shorter than this are dropped. */
  minimumMinutes: number;
  /** Every member, those with no free time too (they still count in "2 of 5 free"). */
  members: readonly TeamMemberTime[];
  /** Replaces the default SUMMARY of every block. */
  summary?: string;
  maxEvents: number;
  /** The revision of an event never published before: when the content last changed. */
  changedAt: Date;
}

const names = (block: TeamBlock) => block.free.map((member) => member.name).join(', ');

function event(input: TeamFeedEventsInput, block: TeamBlock): FeedEvent {
  const summary =
    input.summary !== undefined
      ? sanitizeText(input.summary)
      : input.mode === 'all'
        ? EVERYONE_FREE_SUMMARY
        : `${block.free.length} of ${input.members.length} free`;
  return {
    uid: teamBlockUid(input.teamId, input.mode, block.startsAt),
    startsAt: block.startsAt,
    endsAt: block.endsAt,
    summary,
    description: input.mode === 'all' ? `Everyone is free: ${names(block)}.` : `Free: ${names(block)}.`,
    history: { sequence: 0, changedAt: input.changedAt },
  };
}

/** The team's blocks in start order (they never overlap), cut to the cap, with the count before the cut. */
export function planTeamFeedEvents(input: TeamFeedEventsInput): PlannedFeed {
  const blocks =
    input.mode === 'all'
      ? allFree(input.members, { minimumMinutes: input.minimumMinutes })
      : anyFree(input.members);
  const events = blocks.map((block) => event(input, block));
  return { events: events.slice(0, Math.max(0, Math.floor(input.maxEvents))), total: events.length };
}
