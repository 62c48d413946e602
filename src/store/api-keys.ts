// API keys for the JSON API: an administrator makes one for a program, scoped to connections and teams; the key
// is shown once and kept as its SHA-256 (like a feed token: 256 random bits, so a plain hash is enough). The
// `sfk_` prefix tells a key from a feed token at a glance (and to secret scanners), and the lookup by it.
import type { PrismaClient } from '../generated/prisma/client.js';
import { hashFeedToken, newFeedToken } from '../feeds/feed-token.js';
import type { Revocation } from './revocation.js';

export const API_KEY_PREFIX = 'sfk_';

export interface ApiKeyRecord {
  id: string;
  label: string;
  connectionIds: string[];
  teamIds: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export class ApiKeyNotFoundError extends Error {
  constructor(readonly keyId: string) {
    super(`no API key with id ${keyId}`);
    this.name = 'ApiKeyNotFoundError';
  }
}

export class InvalidApiKeyScopeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidApiKeyScopeError';
  }
}

export interface ApiKeyStore {
  /** The key is returned only here. Refuses an empty scope and ids that name nothing. */
  create(input: { label: string; connectionIds: string[]; teamIds: string[] }): Promise<{
    key: ApiKeyRecord;
    secret: string;
  }>;
  list(options?: { includeRevoked?: boolean }): Promise<ApiKeyRecord[]>;
  /** Idempotent: revoking again keeps the first revocation time, returned with whether it was earlier. */
  revoke(keyId: string, now: Date): Promise<Revocation>;
  /** The active key with this secret, or undefined; hashes whatever it is given. */
  findBySecret(secret: string): Promise<ApiKeyRecord | undefined>;
  /** Notes that the key was used: at most one write an hour per key, so busy programs cost no writes. */
  touch(key: ApiKeyRecord, now: Date): Promise<void>;
}

/** Trimmed, one line, 1–100 characters; InvalidApiKeyScopeError otherwise. The CLI checks `--label` by it. */
export function validApiKeyLabel(label: string): string {
  const trimmed = label.trim().replace(/\s+/g, ' ');
  if (trimmed === '' || trimmed.length > 100) {
    throw new InvalidApiKeyScopeError('an API key needs a label of 1–100 characters (who uses it, for what)');
  }
  return trimmed;
}

const TOUCH_EVERY_MS = 3_600_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function createApiKeyStore(prisma: PrismaClient): ApiKeyStore {
  return {
    async create(input) {
      const label = validApiKeyLabel(input.label);
      const connectionIds = [...new Set(input.connectionIds)];
      const teamIds = [...new Set(input.teamIds)];
      if (connectionIds.length + teamIds.length === 0) {
        throw new InvalidApiKeyScopeError('an API key must be scoped to at least one connection or team');
      }
      const malformed = [...connectionIds, ...teamIds].find((id) => !UUID.test(id));
      if (malformed !== undefined) throw new InvalidApiKeyScopeError(`"${malformed}" is not an id`);
      const [connections, teams] = await Promise.all([
        prisma.connection.count({ where: { id: { in: connectionIds } } }),
        prisma.team.count({ where: { id: { in: teamIds } } }),
      ]);
      if (connections !== connectionIds.length || teams !== teamIds.length) {
        throw new InvalidApiKeyScopeError('the scope names a connection or team that does not exist');
      }
      const secret = `${API_KEY_PREFIX}${newFeedToken()}`;
      const key = await prisma.apiKey.create({
        data: { label, connectionIds, teamIds, tokenHash: new Uint8Array(hashFeedToken(secret)) },
        omit: { tokenHash: true },
      });
      return { key, secret };
    },

    list: (options = {}) =>
      prisma.apiKey.findMany({
        where: options.includeRevoked ? {} : { revokedAt: null },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        omit: { tokenHash: true },
      }),

    async revoke(keyId, now) {
      const find = () => (UUID.test(keyId) ? prisma.apiKey.findUnique({ where: { id: keyId } }) : null);
      const row = await find();
      if (!row) throw new ApiKeyNotFoundError(keyId);
      if (row.revokedAt) return { revokedAt: row.revokedAt, alreadyRevoked: true };
      const { count } = await prisma.apiKey.updateMany({
        where: { id: keyId, revokedAt: null },
        data: { revokedAt: now },
      });
      if (count === 1) return { revokedAt: now, alreadyRevoked: false };
      // Revoked by another writer between the read and the update: theirs is the first time.
      return { revokedAt: (await find())?.revokedAt ?? now, alreadyRevoked: true };
    },

    async findBySecret(secret) {
      const row = await prisma.apiKey.findFirst({
        where: { tokenHash: new Uint8Array(hashFeedToken(secret)), revokedAt: null },
        omit: { tokenHash: true },
      });
      return row ?? undefined;
    },

    async touch(key, now) {
      if (key.lastUsedAt !== null && now.getTime() - key.lastUsedAt.getTime() < TOUCH_EVERY_MS) return;
      await prisma.apiKey.updateMany({ where: { id: key.id }, data: { lastUsedAt: now } });
    },
  };
}
