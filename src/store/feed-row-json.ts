// A feed row as one JSON value, for a statement that reads it beside other rows in one round trip (the CalDAV
// push reads its destination, the feed and its connection's state so), and its decoding back into Prisma's Feed:
// timestamps come back as strings in JSON. Every column but the token hash, which nothing after a lookup needs.
import type { Feed } from '../generated/prisma/client.js';
import { Prisma } from '../generated/prisma/client.js';
import { CONNECTION_STATE_JSON, type ConnectionStateJson } from './feed-inputs.js';

/** The feed row's columns a FeedRecord is made of, as one JSON value, of the row `f`. */
export const FEED_ROW_JSON = Prisma.sql`json_build_object(
  'id', f."id", 'connectionId', f."connection_id", 'teamId', f."team_id",
  'upstreamEventId', f."upstream_event_id", 'label', f."label", 'tokenSealed', f."token_sealed",
  'options', f."options", 'createdAt', f."created_at", 'revokedAt', f."revoked_at",
  'inputsChangedAt', f."inputs_changed_at", 'labelChangedAt', f."label_changed_at")`;

type Stamp = string;
export type FeedRowJson = Omit<
  Feed,
  'tokenHash' | 'createdAt' | 'revokedAt' | 'inputsChangedAt' | 'labelChangedAt'
> & {
  createdAt: Stamp;
  revokedAt: Stamp | null;
  inputsChangedAt: Stamp | null;
  labelChangedAt: Stamp | null;
};

const dateOrNull = (stamp: Stamp | null) => (stamp === null ? null : new Date(stamp));

export const feedRowOf = (row: FeedRowJson): Omit<Feed, 'tokenHash'> => ({
  ...row,
  createdAt: new Date(row.createdAt),
  revokedAt: dateOrNull(row.revokedAt),
  inputsChangedAt: dateOrNull(row.inputsChangedAt),
  labelChangedAt: dateOrNull(row.labelChangedAt),
});

/**
 * The feed `f` with its connection's state (null for a team's feed), as one JSON value: what a feed is resolved
 * from (FeedStore.resolveFrom) when a statement reads it beside other rows.
 */
export const RESOLVED_FEED_JSON = Prisma.sql`json_build_object(
  'feed', ${FEED_ROW_JSON},
  'connection', (SELECT ${CONNECTION_STATE_JSON} FROM "connection" c WHERE c."id" = f."connection_id"))`;

export interface ResolvedFeedJson {
  feed: FeedRowJson;
  connection: ConnectionStateJson | null;
}
