// The connection aggregate: who is connected, their sealed OAuth tokens, and when they are due. Tokens enter
// and leave this module only in the clear in memory; the rows hold AES-GCM envelopes (token-vault.ts).
import { findDueConnections, type DueConnectionRow, type DuePageCursor } from './due-connections.js';
import { sqlThroughPrisma } from './pooled-transaction.js';
import { recordWebhookEvents } from './webhook-outbox.js';
import { needsReauth } from './webhook-events.js';
import { randomUUID } from 'node:crypto';
import type { Connection, PrismaClient } from '../generated/prisma/client.js';
import { Prisma } from '../generated/prisma/client.js';
import { pooledRows } from './pooled-rows.js';
import type { TokenVault } from './token-vault.js';

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  expiresAt: Date;
  scope?: string;
}

export interface StoredTokens extends TokenPair {
  /**
   * The sealed refresh token as stored, which is also the tokens' version: every write seals with a fresh IV,
   * so two writes never store the same envelope, even of the same token. Compare two reads to tell whether
   * someone refreshed or reconnected in between, or hand it to the conditional writes below.
   */
  refreshTokenSealed: string;
  /** The grant was refused with these tokens already (status needs_reauth): spending them again is futile. */
  refused: boolean;
}

export interface GrantedAccount {
  upstreamUserId: string;
  email?: string | null;
  displayName?: string | null;
  timezone?: string | null;
  tokens: TokenPair;
}

export class ConnectionNotFoundError extends Error {
  constructor(
    readonly connectionId: string,
    message = `no connection with id ${connectionId}`,
  ) {
    super(message);
    this.name = 'ConnectionNotFoundError';
  }
}

export interface ConnectionStore {
  /** Creates the connection, or updates the tokens of the same upstream account: reconnecting never duplicates. */
  upsertFromGrant(account: GrantedAccount, now: Date): Promise<Connection>;
  get(id: string): Promise<Connection>;
  /** The connection's status; undefined when it is gone. */
  statusOf(id: string): Promise<Connection['status'] | undefined>;
  /** The id of the connection of this upstream account, if it has one (signing in finds it so). */
  idOfAccount(upstreamUserId: string): Promise<string | undefined>;
  /**
   * Deletes the connection and, through the foreign keys, its snapshots, slots, bookings, runs, feeds (their
   * sealed tokens with them) and team memberships; the triggers tell every web process to forget the feeds.
   */
  delete(id: string): Promise<void>;
  readTokens(id: string): Promise<StoredTokens>;
  /**
   * Stores refreshed tokens unless the stored ones changed since they were read as `readAs` (their
   * refreshTokenSealed): then a reconnect or another refresh committed meanwhile, its tokens win, and this
   * returns false.
   */
  saveTokensIfUnchanged(id: string, readAs: string, tokens: TokenPair): Promise<boolean>;
  /**
   * Feeds say so in their description, so the feed version moves too. With `readAs`, only if the tokens are
   * still the ones read as that (a reconnect may have brought a new grant meanwhile); false if they changed.
   */
  markNeedsReauth(id: string, reason: string, now: Date, readAs?: string): Promise<boolean>;
  /**
   * Active connections due by `now`, earliest first, with what the tick budgets by (band state, pull coverage):
   * at most `limit`, those after `after` (the previous page's last row) when given.
   */
  findDue(now: Date, limit: number, after?: DuePageCursor): Promise<DueConnectionRow[]>;
}

export function createConnectionStore(prisma: PrismaClient, vault: TokenVault): ConnectionStore {
  const sealed = (id: string, tokens: TokenPair) => ({
    accessTokenSealed: vault.seal(tokens.accessToken, id),
    refreshTokenSealed: vault.seal(tokens.refreshToken, id),
    accessExpiresAt: tokens.expiresAt,
    scope: tokens.scope ?? null,
  });

  async function get(id: string): Promise<Connection> {
    const connection = await prisma.connection.findUnique({ where: { id } });
    if (!connection) throw new ConnectionNotFoundError(id);
    return connection;
  }

  function identityChanged(
    existing: Pick<Connection, 'email' | 'displayName' | 'timezone'>,
    identity: { email: string | null; displayName: string | null; timezone?: string },
  ): boolean {
    return (
      existing.email !== identity.email ||
      existing.displayName !== identity.displayName ||
      (identity.timezone !== undefined && existing.timezone !== identity.timezone)
    );
  }

  async function upsertOnce(account: GrantedAccount, now: Date): Promise<Connection> {
    const identity = {
      email: account.email ?? null,
      displayName: account.displayName ?? null,
      ...(account.timezone ? { timezone: account.timezone } : {}),
    };
    const existing = await prisma.connection.findUnique({
      where: { upstreamUserId: account.upstreamUserId },
    });
    if (existing) {
      return prisma.connection.update({
        where: { id: existing.id },
        data: {
          ...identity,
          ...sealed(existing.id, account.tokens),
          status: 'active',
          nextSyncAt: now,
          // A reconnect after needs_reauth, or under a new name, changes what feeds say about the account.
          ...(existing.status !== 'active' || identityChanged(existing, identity)
            ? { feedVersion: { increment: 1 }, feedChangedAt: now }
            : {}),
        },
      });
    }
    const id = randomUUID();
    return prisma.connection.create({
      data: {
        id,
        upstreamUserId: account.upstreamUserId,
        ...identity,
        ...sealed(id, account.tokens),
        status: 'active',
        nextSyncAt: now,
      },
    });
  }

  return {
    async upsertFromGrant(account, now) {
      try {
        return await upsertOnce(account, now);
      } catch (error: unknown) {
        // Two callbacks for the same account raced to create it; the loser updates the winner's row.
        if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') {
          return upsertOnce(account, now);
        }
        throw error;
      }
    },

    get,

    async statusOf(id) {
      const connection = await prisma.connection.findUnique({ where: { id }, select: { status: true } });
      return connection?.status;
    },

    async idOfAccount(upstreamUserId) {
      const row = await prisma.connection.findUnique({ where: { upstreamUserId }, select: { id: true } });
      return row?.id;
    },

    async delete(id) {
      await prisma.connection.deleteMany({ where: { id } });
    },

    // Every sync reads its tokens at least once, and saves them whenever it refreshed: from the pool, past
    // Prisma's query interpreter (pooled-rows.ts), the columns these need only.
    async readTokens(id) {
      const [connection] = await pooledRows<
        Pick<Connection, 'accessTokenSealed' | 'refreshTokenSealed' | 'accessExpiresAt' | 'scope' | 'status'>
      >(
        prisma,
        Prisma.sql`
          SELECT access_token_sealed AS "accessTokenSealed", refresh_token_sealed AS "refreshTokenSealed",
                 access_expires_at AS "accessExpiresAt", scope, status::text AS status
          FROM connection WHERE id = ${id}::uuid`,
      );
      if (!connection) throw new ConnectionNotFoundError(id);
      if (!connection.accessTokenSealed || !connection.refreshTokenSealed || !connection.accessExpiresAt) {
        throw new Error(`connection ${id} holds no tokens`);
      }
      return {
        accessToken: vault.open(connection.accessTokenSealed, id),
        refreshToken: vault.open(connection.refreshTokenSealed, id),
        expiresAt: connection.accessExpiresAt,
        scope: connection.scope ?? undefined,
        refreshTokenSealed: connection.refreshTokenSealed,
        refused: connection.status === 'needs_reauth',
      };
    },

    // Compare-and-set in one UPDATE: Postgres re-checks the WHERE on the latest row version once a concurrent
    // writer's lock is released, so a reconnect committed between our read and this write is never overwritten.
    // updated_at is set as Prisma's @updatedAt would, by this process's clock.
    async saveTokensIfUnchanged(id, readAs, tokens) {
      const row = sealed(id, tokens);
      const updated = await pooledRows<{ id: string }>(
        prisma,
        Prisma.sql`
          UPDATE connection
          SET access_token_sealed = ${row.accessTokenSealed}, refresh_token_sealed = ${row.refreshTokenSealed},
              access_expires_at = ${row.accessExpiresAt}, scope = ${row.scope}, updated_at = ${new Date()}
          WHERE id = ${id}::uuid AND refresh_token_sealed = ${readAs}
          RETURNING id`,
      );
      return updated.length === 1;
    },

    async markNeedsReauth(id, reason, now, readAs) {
      return prisma.$transaction(async (tx) => {
        const before = await tx.connection.findUnique({ where: { id }, select: { status: true } });
        const { count } = await tx.connection.updateMany({
          where: { id, ...(readAs === undefined ? {} : { refreshTokenSealed: readAs }) },
          data: {
            status: 'needs_reauth',
            lastSyncError: reason,
            feedVersion: { increment: 1 },
            feedChangedAt: now,
          },
        });
        // Webhook endpoints hear it once, when the status changes, in the same transaction (the outbox).
        if (count === 1 && before?.status !== 'needs_reauth') {
          await recordWebhookEvents(
            sqlThroughPrisma(tx),
            id,
            [needsReauth({ connectionId: id, at: now })],
            now,
          );
        }
        return count === 1;
      });
    },

    async findDue(now, limit, after) {
      return findDueConnections(prisma, now, limit, after);
    },
  };
}
