// The feed aggregate: subscribable URLs of a connection or of a team. A feed is looked up by its token's SHA-256; the token
// itself is kept only sealed by the token vault (bound to the feed's id), so a database leak without the key
// does not leak working feed URLs, and the owner's page can still show the URL again.
// A row is handed out as feed-record.ts reads it.
import type { Feed, PrismaClient } from '../generated/prisma/client.js';
import { Prisma } from '../generated/prisma/client.js';
import {
  feedOptionsSchema,
  normalizeFeedOptions,
  optionsConflict,
  viewOf,
  DEFAULT_TEAM_MODE,
  type FeedOptions,
} from '../feeds/feed-options.js';
import type { FeedConnectionState, FeedTeamState } from '../feeds/feed-inputs.js';
import { hashFeedToken, newFeedToken } from '../feeds/feed-token.js';
import { ConnectionNotFoundError } from './connections.js';
import { connectionStateOf, FEED_CONNECTION_SELECT, FEED_TEAM_SELECT, teamStateOf } from './feed-inputs.js';
import { feedRecordOf, type FeedRecord, type FeedStoreLogger } from './feed-record.js';
import { feedRowOf, RESOLVED_FEED_JSON, type ResolvedFeedJson } from './feed-row-json.js';
import type { Revocation } from './revocation.js';
import { TeamNotFoundError } from './teams.js';
import type { TokenVault } from './token-vault.js';
import { randomUUID } from 'node:crypto';

export type { FeedRecord, FeedStoreLogger } from './feed-record.js';

export type { FeedConnectionState, FeedTeamState } from '../feeds/feed-inputs.js';

/** An active feed with the state its bytes depend on: its connection's, or its team's and every member's. */
export type ResolvedFeed =
  | { kind: 'connection'; feed: FeedRecord; connection: FeedConnectionState }
  | { kind: 'team'; feed: FeedRecord; team: FeedTeamState };

/** Who a feed belongs to: the id a change notice about its row names. */
export const feedOwnerId = (feed: Pick<FeedRecord, 'connectionId' | 'teamId'>): string =>
  (feed.connectionId ?? feed.teamId)!;

/** Every id whose change notice may change what the feed shows: its owner's, and a team's members'. */
export function feedDependencies(resolved: ResolvedFeed): string[] {
  return resolved.kind === 'connection'
    ? [resolved.connection.id]
    : [resolved.team.id, ...resolved.team.members.map((member) => member.id)];
}

export interface FeedStore {
  /** The plaintext token is returned only here and by rotate. */
  create(input: {
    connectionId: string;
    upstreamEventId?: string | null;
    label?: string | null;
    options?: FeedOptions;
  }): Promise<{ feed: FeedRecord; token: string }>;
  /** A team's feed; its options carry the mode (`all` unless given). Throws TeamNotFoundError. */
  createTeamFeed(input: {
    teamId: string;
    label?: string | null;
    options?: FeedOptions;
  }): Promise<{ feed: FeedRecord; token: string }>;
  /** The connection's default feed (free time of all event types, default options): created if it has none that is not revoked. Returns
   * the token only when it created one (an existing feed's token cannot be recovered — then `token` is null). */
  ensureDefaultFeed(connectionId: string): Promise<{ feed: FeedRecord; token: string | null }>;
  list(filter?: { connectionId?: string; teamId?: string; includeRevoked?: boolean }): Promise<FeedRecord[]>;
  /** Revoked feeds too. Throws FeedNotFoundError. */
  get(feedId: string): Promise<FeedRecord>;
  /** A new token; the old URL stops working at once. Throws FeedNotFoundError for an unknown or revoked feed. */
  rotate(feedId: string): Promise<{ feed: FeedRecord; token: string }>;
  /**
   * What an active feed shows, changed under the same URL; `now` (the writer's clock) becomes its
   * Last-Modified when the options differ. Throws FeedNotFoundError, InvalidFeedOptionsError.
   */
  updateOptions(feedId: string, options: FeedOptions, now: Date): Promise<FeedRecord>;
  /**
   * An active feed's name for its owner (shown first wherever the feed is listed; null: none, the feed is
   * then called by what it shows; the heading of its share page, so a change moves labelChangedAt to `now`).
   * Not part of the feed's content. Throws FeedNotFoundError.
   */
  rename(feedId: string, label: string | null, now: Date): Promise<FeedRecord>;
  /**
   * Idempotent: revoking again keeps the first revocation time. Returns that time, and whether the feed was
   * revoked before this call. Throws FeedNotFoundError.
   */
  revoke(feedId: string, now: Date): Promise<Revocation>;
  /** Active (not revoked) feed for a token, or undefined. Always hashes and queries, whatever the token looks like. */
  findByToken(token: string): Promise<FeedRecord | undefined>;
  /** The active feed with this token hash and the state it shows (its connection's or its team's), in one
   * query; or undefined. */
  resolveTokenHash(tokenHash: Buffer): Promise<ResolvedFeed | undefined>;
  /** The feed (revoked or not) and the state it shows, as resolveTokenHash reads them. Throws FeedNotFoundError. */
  resolve(feedId: string): Promise<ResolvedFeed>;
  /**
   * As resolve, from what a statement of another store read beside its own rows (RESOLVED_FEED_JSON; null: no
   * such feed): a connection's feed as it is, a team's read again with its members.
   */
  resolveFrom(feedId: string, read: ResolvedFeedJson | null): Promise<ResolvedFeed>;
  /** The feed's token opened from its sealed copy, for its owner's page; null when none was kept. */
  revealToken(feedId: string): Promise<string | null>;
}

export class FeedNotFoundError extends Error {
  constructor(
    readonly feedId: string,
    message = `no feed with id ${feedId}`,
  ) {
    super(message);
    this.name = 'FeedNotFoundError';
  }
}

export class InvalidFeedOptionsError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid feed options: ${issues.join('; ')}`);
    this.name = 'InvalidFeedOptionsError';
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function validOptions(options: unknown, owner: 'connection' | 'team'): FeedOptions {
  const parsed = feedOptionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new InvalidFeedOptionsError(
      parsed.error.issues.map((issue) => `${issue.path.join('.') || '(options)'}: ${issue.message}`),
    );
  }
  const conflict = optionsConflict(parsed.data);
  if (conflict) throw new InvalidFeedOptionsError([conflict]);
  if (owner === 'connection' && parsed.data.mode !== undefined) {
    throw new InvalidFeedOptionsError(['mode applies to team feeds only']);
  }
  return normalizeFeedOptions(
    owner === 'team' ? { ...parsed.data, mode: parsed.data.mode ?? DEFAULT_TEAM_MODE } : parsed.data,
  );
}

/** Prisma's Bytes is a Uint8Array over a plain ArrayBuffer; a Buffer may sit on a shared pool. */
const storedTokenHash = (token: string) => new Uint8Array(hashFeedToken(token));

/** The default feed: free time over the configured days, with the default summary. */
const isDefaultOptions = (o: FeedOptions) =>
  viewOf(o) === 'free' && o.days === undefined && o.summary === undefined;

/** The associated data a feed's sealed token is bound to: a sealed copy moved to another feed fails to open. */
const sealingContext = (feedId: string) => `feed:${feedId}`;

/**
 * `vault` seals each new token beside its hash; without it (a command run without TOKEN_ENCRYPTION_KEY) tokens
 * are kept as hashes only, and the owner's page offers to replace them.
 */
export function createFeedStore(
  prisma: PrismaClient,
  logger?: FeedStoreLogger,
  vault?: TokenVault,
): FeedStore {
  const sealed = (feedId: string, token: string) => vault?.seal(token, sealingContext(feedId)) ?? null;

  /** The state a feed shows, read with its row: its connection's, or its team's and members'. */
  const OWNER_STATE = {
    connection: { select: FEED_CONNECTION_SELECT },
    team: { select: FEED_TEAM_SELECT },
  } as const;

  const toRecord = (row: Omit<Feed, 'tokenHash'>) => feedRecordOf(row, logger);

  const resolveFrom: FeedStore['resolveFrom'] = async (feedId, read) => {
    if (read?.connection) {
      const feed = toRecord(feedRowOf(read.feed));
      return { kind: 'connection', feed, connection: connectionStateOf(read.connection) };
    }
    const row = read ? await prisma.feed.findUnique({ where: { id: feedId }, include: OWNER_STATE }) : null;
    if (row?.team) return { kind: 'team', feed: toRecord(row), team: teamStateOf(row.team) };
    throw new FeedNotFoundError(feedId);
  };

  // Prisma rejects a malformed uuid with a validation error; to callers it is simply a feed that does not exist.
  async function findRow(feedId: string): Promise<Feed> {
    const row = UUID.test(feedId) ? await prisma.feed.findUnique({ where: { id: feedId } }) : null;
    if (!row) throw new FeedNotFoundError(feedId);
    return row;
  }

  async function insert(
    db: Prisma.TransactionClient | PrismaClient,
    data: {
      connectionId?: string;
      teamId?: string;
      upstreamEventId: string | null;
      label: string | null;
      options: FeedOptions;
    },
  ): Promise<{ feed: FeedRecord; token: string }> {
    const token = newFeedToken();
    // The id is chosen here so the sealed token can be bound to it in the same insert.
    const id = randomUUID();
    try {
      const row = await db.feed.create({
        data: {
          ...data,
          id,
          options: data.options as Prisma.InputJsonObject,
          tokenHash: storedTokenHash(token),
          tokenSealed: sealed(id, token),
        },
      });
      return { feed: toRecord(row), token };
    } catch (error: unknown) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2003') {
        throw data.teamId !== undefined
          ? new TeamNotFoundError(data.teamId)
          : new ConnectionNotFoundError(data.connectionId ?? '');
      }
      throw error;
    }
  }

  return {
    async create(input) {
      if (!UUID.test(input.connectionId)) throw new ConnectionNotFoundError(input.connectionId);
      return insert(prisma, {
        connectionId: input.connectionId,
        upstreamEventId: input.upstreamEventId?.trim() || null,
        label: input.label?.trim() || null,
        options: validOptions(input.options ?? {}, 'connection'),
      });
    },

    async createTeamFeed(input) {
      if (!UUID.test(input.teamId)) throw new TeamNotFoundError(input.teamId);
      return insert(prisma, {
        teamId: input.teamId,
        upstreamEventId: null,
        label: input.label?.trim() || null,
        options: validOptions(input.options ?? {}, 'team'),
      });
    },

    async ensureDefaultFeed(connectionId) {
      if (!UUID.test(connectionId)) throw new ConnectionNotFoundError(connectionId);
      return prisma.$transaction(async (tx) => {
        // Two connect callbacks for one account may race here; the row lock makes the second see the first's feed.
        const locked = await tx.$queryRaw<{ id: string }[]>`
          SELECT id FROM connection WHERE id = ${connectionId}::uuid FOR UPDATE`;
        if (locked.length === 0) throw new ConnectionNotFoundError(connectionId);
        const candidates = await tx.feed.findMany({
          where: { connectionId, upstreamEventId: null, revokedAt: null },
          orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        });
        const existing = candidates.map(toRecord).find((feed) => isDefaultOptions(feed.options));
        if (existing) return { feed: existing, token: null };
        return insert(tx, {
          connectionId,
          upstreamEventId: null,
          label: null,
          options: normalizeFeedOptions({}),
        });
      });
    },

    async list(filter = {}) {
      if (filter.connectionId !== undefined && !UUID.test(filter.connectionId)) return [];
      if (filter.teamId !== undefined && !UUID.test(filter.teamId)) return [];
      const rows = await prisma.feed.findMany({
        where: {
          ...(filter.connectionId !== undefined ? { connectionId: filter.connectionId } : {}),
          ...(filter.teamId !== undefined ? { teamId: filter.teamId } : {}),
          ...(filter.includeRevoked ? {} : { revokedAt: null }),
        },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      });
      return rows.map(toRecord);
    },

    async get(feedId) {
      return toRecord(await findRow(feedId));
    },

    async rotate(feedId) {
      const token = newFeedToken();
      const updated = UUID.test(feedId)
        ? await prisma.feed.updateMany({
            where: { id: feedId, revokedAt: null },
            data: { tokenHash: storedTokenHash(token), tokenSealed: sealed(feedId, token) },
          })
        : { count: 0 };
      if (updated.count === 0) {
        const row = await findRow(feedId);
        throw new FeedNotFoundError(feedId, `feed ${row.id} is revoked; create a new one instead`);
      }
      return { feed: toRecord(await findRow(feedId)), token };
    },

    async rename(feedId, label, now) {
      const row = await findRow(feedId);
      const valid = label?.trim().slice(0, 100) || null;
      // Never back, as for the options below: a writer whose clock is behind leaves it to the trigger.
      const changedAt =
        row.labelChangedAt === null || now.getTime() > row.labelChangedAt.getTime()
          ? now
          : row.labelChangedAt;
      const updated = await prisma.feed.updateMany({
        where: { id: row.id, revokedAt: null },
        data: { label: valid, ...(valid !== row.label ? { labelChangedAt: changedAt } : {}) },
      });
      if (updated.count === 0) throw new FeedNotFoundError(feedId, `feed ${row.id} is revoked`);
      return toRecord(await findRow(feedId));
    },

    async updateOptions(feedId, options, now) {
      const row = await findRow(feedId);
      const valid = validOptions(options, row.teamId === null ? 'connection' : 'team');
      const changed = JSON.stringify(valid) !== JSON.stringify(toRecord(row).options);
      // Never back: a writer whose clock is behind the last change leaves the column as it is, and the
      // feed_inputs_changed_at trigger then moves it with the database's clock.
      const changedAt =
        row.inputsChangedAt === null || now.getTime() > row.inputsChangedAt.getTime()
          ? now
          : row.inputsChangedAt;
      const updated = await prisma.feed.updateMany({
        where: { id: row.id, revokedAt: null },
        data: {
          options: valid as Prisma.InputJsonObject,
          ...(changed ? { inputsChangedAt: changedAt } : {}),
        },
      });
      if (updated.count === 0) throw new FeedNotFoundError(feedId, `feed ${row.id} is revoked`);
      return toRecord(await findRow(feedId));
    },

    async revoke(feedId, now) {
      const row = await findRow(feedId);
      if (row.revokedAt) return { revokedAt: row.revokedAt, alreadyRevoked: true };
      const { count } = await prisma.feed.updateMany({
        where: { id: feedId, revokedAt: null },
        data: { revokedAt: now },
      });
      if (count === 1) return { revokedAt: now, alreadyRevoked: false };
      // Revoked by another writer between the read and the update: theirs is the first time.
      return { revokedAt: (await findRow(feedId)).revokedAt ?? now, alreadyRevoked: true };
    },

    async findByToken(token) {
      const row = await prisma.feed.findFirst({
        where: { tokenHash: storedTokenHash(token), revokedAt: null },
      });
      return row ? toRecord(row) : undefined;
    },

    async revealToken(feedId) {
      const row = await findRow(feedId);
      if (row.tokenSealed === null || row.revokedAt !== null || vault === undefined) return null;
      return vault.open(row.tokenSealed, sealingContext(row.id));
    },

    async resolveTokenHash(tokenHash) {
      const row = await prisma.feed.findFirst({
        where: { tokenHash: new Uint8Array(tokenHash), revokedAt: null },
        include: OWNER_STATE,
      });
      if (!row) return undefined;
      if (row.connection) return { kind: 'connection', feed: toRecord(row), connection: row.connection };
      if (row.team) return { kind: 'team', feed: toRecord(row), team: teamStateOf(row.team) };
      return undefined;
    },

    async resolve(feedId) {
      if (!UUID.test(feedId)) throw new FeedNotFoundError(feedId);
      // A connection's feed, the push's case, in one statement (Prisma reads each relation of an include in a
      // statement of its own); a team's feed as the token lookup reads it.
      const [found] = await prisma.$queryRaw<{ read: ResolvedFeedJson }[]>`
        SELECT ${RESOLVED_FEED_JSON} AS "read" FROM "feed" f WHERE f."id" = ${feedId}::uuid`;
      return resolveFrom(feedId, found?.read ?? null);
    },

    resolveFrom,
  };
}
