// The connection aggregate: who is connected, their sealed OAuth tokens, and when they are due. Tokens enter
// and leave this module only in the clear in memory; the rows hold AES-GCM envelopes (token-vault.ts).
import { randomUUID } from 'node:crypto';
import type { Connection, PrismaClient } from '../generated/prisma/client.js';
import { Prisma } from '../generated/prisma/client.js';
import type { TokenVault } from './token-vault.js';

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  expiresAt: Date;
  scope?: string;
}

export interface StoredTokens extends TokenPair {
  /** The sealed refresh token as stored: compare two reads to tell whether someone refreshed in between. */
  refreshTokenSealed: string;
}

export interface GrantedAccount {
  upstreamUserId: string;
  email?: string | null;
  displayName?: string | null;
  timezone?: string | null;
  tokens: TokenPair;
}

export class ConnectionNotFoundError extends Error {
  constructor(readonly connectionId: string) {
    super(`no connection with id ${connectionId}`);
    this.name = 'ConnectionNotFoundError';
  }
}

export interface ConnectionStore {
  /** Creates the connection, or updates the tokens of the same upstream account: reconnecting never duplicates. */
  upsertFromGrant(account: GrantedAccount, now: Date): Promise<Connection>;
  get(id: string): Promise<Connection>;
  readTokens(id: string): Promise<StoredTokens>;
  saveTokens(id: string, tokens: TokenPair): Promise<void>;
  /** Feeds say so in their description, so the feed version moves too. */
  markNeedsReauth(id: string, reason: string, now: Date): Promise<void>;
  /** Active connections whose next sync is due, soonest first. */
  findDueIds(now: Date, limit: number): Promise<string[]>;
  listActiveIds(): Promise<string[]>;
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

    async readTokens(id) {
      const connection = await get(id);
      if (!connection.accessTokenSealed || !connection.refreshTokenSealed || !connection.accessExpiresAt) {
        throw new Error(`connection ${id} holds no tokens`);
      }
      return {
        accessToken: vault.open(connection.accessTokenSealed, id),
        refreshToken: vault.open(connection.refreshTokenSealed, id),
        expiresAt: connection.accessExpiresAt,
        scope: connection.scope ?? undefined,
        refreshTokenSealed: connection.refreshTokenSealed,
      };
    },

    async saveTokens(id, tokens) {
      await prisma.connection.update({ where: { id }, data: sealed(id, tokens) });
    },

    async markNeedsReauth(id, reason, now) {
      await prisma.connection.update({
        where: { id },
        data: {
          status: 'needs_reauth',
          lastSyncError: reason,
          feedVersion: { increment: 1 },
          feedChangedAt: now,
        },
      });
    },

    async findDueIds(now, limit) {
      const rows = await prisma.connection.findMany({
        where: { status: 'active', nextSyncAt: { lte: now } },
        orderBy: { nextSyncAt: 'asc' },
        take: limit,
        select: { id: true },
      });
      return rows.map((row) => row.id);
    },

    async listActiveIds() {
      const rows = await prisma.connection.findMany({ where: { status: 'active' }, select: { id: true } });
      return rows.map((row) => row.id);
    },
  };
}
