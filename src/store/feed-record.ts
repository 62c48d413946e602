// A stored feed row as the store hands it out (FeedRecord): its options read leniently, as writes never are
// (feeds.ts's validOptions refuses what this reads past), since a row written by an older version, or by hand,
// must not take a feed down.
import type { Feed } from '../generated/prisma/client.js';
import {
  DEFAULT_TEAM_MODE,
  feedOptionsSchema,
  normalizeFeedOptions,
  type FeedOptions,
} from '../feeds/feed-options.js';

export interface FeedRecord {
  id: string;
  /** The connection whose feed it is; null for a team's feed. */
  connectionId: string | null;
  /** The team whose feed it is; null for a connection's feed. */
  teamId: string | null;
  /** null: every event type of the connection. */
  upstreamEventId: string | null;
  label: string | null;
  options: FeedOptions;
  createdAt: Date;
  /** When its options or its event type last changed; null until they first do. */
  inputsChangedAt: Date | null;
  /** When its label last changed; null until it first does. */
  labelChangedAt: Date | null;
  revokedAt: Date | null;
  /** False for a feed made before tokens were kept sealed (or by a process without the vault key). */
  tokenRecoverable: boolean;
}

/** What the store needs of a logger (pino's satisfies it). */
export interface FeedStoreLogger {
  warn(details: Record<string, unknown>, message: string): void;
}

/** A stored value that no longer validates must not take a feed down: defaults, and a warning. */
export function feedRecordOf(row: Omit<Feed, 'tokenHash'>, logger?: FeedStoreLogger): FeedRecord {
  const parsed = feedOptionsSchema.safeParse(row.options);
  if (!parsed.success) {
    logger?.warn(
      { feedId: row.id, issues: parsed.error.issues.map((issue) => issue.message) },
      'stored feed options are invalid; serving the feed with default options',
    );
  }
  const options = parsed.success ? parsed.data : {};
  return {
    id: row.id,
    connectionId: row.connectionId,
    teamId: row.teamId,
    upstreamEventId: row.upstreamEventId,
    label: row.label,
    // A team feed always has a mode, a connection's feed never: the row decides, not what its JSON says.
    options: normalizeFeedOptions(
      row.teamId !== null
        ? { ...options, mode: options.mode ?? DEFAULT_TEAM_MODE }
        : { ...options, mode: undefined, minimum: undefined },
    ),
    createdAt: row.createdAt,
    inputsChangedAt: row.inputsChangedAt,
    labelChangedAt: row.labelChangedAt,
    revokedAt: row.revokedAt,
    tokenRecoverable: row.tokenSealed !== null,
  };
}
