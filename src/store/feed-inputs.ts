// The declared inputs of a feed (feeds/feed-inputs.ts) as Prisma selects them: the connection's select is the
// declaration itself, and the compiler holds what the selects read to the declared types, so a declared name
// that is no column, a column whose type moved (a new connection status) or a renamed feed column fails here.
import { Prisma } from '../generated/prisma/client.js';
import {
  FEED_CONNECTION_INPUTS,
  type FeedConnectionState,
  type FeedRowInputName,
  type FeedTeamState,
} from '../feeds/feed-inputs.js';

export const FEED_CONNECTION_SELECT = FEED_CONNECTION_INPUTS satisfies Prisma.ConnectionSelect;

/** A team's declared columns and its members' declared connection columns, members by connection id. */
export const FEED_TEAM_SELECT = {
  id: true,
  name: true,
  membersChangedAt: true,
  members: {
    select: { connection: { select: FEED_CONNECTION_SELECT } },
    orderBy: { connectionId: 'asc' },
  },
} as const satisfies Prisma.TeamSelect;

/**
 * The connection's declared columns as one JSON value of the row `c`, for a statement that reads them beside
 * others (a push's feed, its content): the same names as the select above, the compiler holds the type to them.
 */
export const CONNECTION_STATE_JSON = Prisma.sql`json_build_object(
  'id', c."id", 'displayName', c."display_name", 'email', c."email", 'timezone', c."timezone",
  'status', c."status", 'feedVersion', c."feed_version", 'feedChangedAt', c."feed_changed_at")`;

export type ConnectionStateJson = Omit<FeedConnectionState, 'feedChangedAt'> & {
  feedChangedAt: string | null;
};

export const connectionStateOf = ({ feedChangedAt, ...state }: ConnectionStateJson): FeedConnectionState => ({
  ...state,
  feedChangedAt: feedChangedAt === null ? null : new Date(feedChangedAt),
});

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

const _connectionRowsAreTheDeclaredState: Same<
  Prisma.ConnectionGetPayload<{ select: typeof FEED_CONNECTION_SELECT }>,
  FeedConnectionState
> = true;
const _feedRowInputsAreFeedColumns: FeedRowInputName extends keyof Prisma.FeedSelect ? true : false = true;

type TeamInputsRow = Prisma.TeamGetPayload<{ select: typeof FEED_TEAM_SELECT }>;

export function teamStateOf(row: TeamInputsRow): FeedTeamState {
  return {
    id: row.id,
    name: row.name,
    membersChangedAt: row.membersChangedAt,
    members: row.members.map((m) => m.connection),
  };
}
