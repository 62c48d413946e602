// Share links (issue 37): a link to a page of one feed's free time, for someone who will never subscribe. Each
// has its own secret, so the feed's token is never shown through it; the secret is kept as its SHA-256 (256
// random bits: a plain hash is enough, as for feed tokens) and, with the token vault, sealed beside it bound to
// the link's id, so its owner's page can show the address again. Never plain.
import { DateTime, IANAZone } from 'luxon';
import type { PrismaClient, ShareLink } from '../generated/prisma/client.js';
import { hashFeedToken, newFeedToken } from '../feeds/feed-token.js';
import { FeedNotFoundError } from './feeds.js';
import type { Revocation } from './revocation.js';
import type { TokenVault } from './token-vault.js';

export interface ShareLinkRecord {
  id: string;
  feedId: string;
  label: string;
  /** null: never expires. */
  expiresAt: Date | null;
  /** Origins allowed to frame the embeddable page; empty: not embeddable. */
  frameAncestors: string[];
  createdAt: Date;
  revokedAt: Date | null;
  /** When its feed was revoked: the link then answers 404 as if revoked itself. */
  feedRevokedAt: Date | null;
  lastOpenedAt: Date | null;
  /** Whether the address can be shown again (its secret was sealed). */
  secretRecoverable: boolean;
}

/** A link as the share page needs it: the record and the hash of its feed's token (never the token). */
export interface ResolvedShareLink {
  link: ShareLinkRecord;
  feedTokenHash: Buffer;
}

export class ShareLinkNotFoundError extends Error {
  constructor(readonly linkId: string) {
    super(`no share link with id ${linkId}`);
    this.name = 'ShareLinkNotFoundError';
  }
}

export class InvalidShareLinkError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidShareLinkError';
  }
}

export interface ShareLinkStore {
  /**
   * The secret is returned only here (and by reveal). Made at `now`, the app's clock, as everything else it
   * writes. Throws FeedNotFoundError for no active feed.
   */
  create(input: {
    feedId: string;
    label: string;
    expiresAt: Date | null;
    frameAncestors?: readonly string[];
    now: Date;
  }): Promise<{ link: ShareLinkRecord; secret: string }>;
  /** Of some feeds, or all; revoked ones (or those of a revoked feed) only when asked. Newest first. */
  list(filter?: { feedIds?: readonly string[]; includeRevoked?: boolean }): Promise<ShareLinkRecord[]>;
  /** Throws ShareLinkNotFoundError. */
  get(linkId: string): Promise<ShareLinkRecord>;
  /** Idempotent: revoking again keeps the first time. Throws ShareLinkNotFoundError. */
  revoke(linkId: string, now: Date): Promise<Revocation>;
  /** The secret opened from its sealed copy; null when none was kept or the link is revoked. */
  revealSecret(linkId: string): Promise<string | null>;
  /** The link with this secret's hash, revoked or not (the page tells them apart), or undefined. */
  resolveSecretHash(secretHash: Buffer): Promise<ResolvedShareLink | undefined>;
  /** The zone a feed's dates are read in (for an expiry given as a date): its account's, UTC for a team's. */
  feedZone(feedId: string): Promise<string>;
  /** Notes that the page was opened: at most one write a minute per link. */
  markOpened(link: ShareLinkRecord, now: Date): Promise<void>;
}

interface ResolvedRow {
  id: string;
  feed_id: string;
  label: string;
  expires_at: Date | null;
  frame_ancestors: string[];
  created_at: Date;
  revoked_at: Date | null;
  last_opened_at: Date | null;
  secret_recoverable: boolean;
  feed_token_hash: Uint8Array;
  feed_revoked_at: Date | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const OPENED_EVERY_MS = 60_000;
const MAX_FRAME_ANCESTORS = 10;
const sealingContext = (linkId: string) => `share-link:${linkId}`;

export function hashShareSecret(secret: string): Buffer {
  return hashFeedToken(secret);
}

/** Trimmed, one line, 1–100 characters. */
export function validShareLabel(label: string): string {
  const trimmed = label.trim().replace(/\s+/g, ' ');
  if (trimmed === '' || trimmed.length > 100) {
    throw new InvalidShareLinkError('a share link needs a label of 1–100 characters (who it is for)');
  }
  return trimmed;
}

// A host as DNS names it (labels of letters, digits and inner hyphens; an IPv4 address is one too), after URL
// has lowered its case and turned an international name into its xn-- form. WHATWG URL itself lets `*`, `;`,
// `,` and quotes through in a host (and decodes `%3B` into one), each of which would widen or end the CSP
// directive the origin is written into.
const DNS_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const isDnsHost = (host: string) => host.length <= 253 && host.split('.').every((l) => DNS_LABEL.test(l));
// URL accepts a bracketed host only when it is an IPv6 address, which it writes in its canonical form.
const isIpv6Host = (host: string) => /^\[[0-9a-f:.]+\]$/.test(host);

/**
 * An origin a page may be framed from, as CSP frame-ancestors takes it: https (or http for loopback) scheme,
 * a host of DNS characters (or an IP address) and a port, nothing else; anything else is refused with the
 * reason, naming the value.
 */
export function validFrameAncestor(value: string): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new InvalidShareLinkError(`"${value}" is not an origin like https://example.com`);
  }
  if (!isDnsHost(url.hostname) && !isIpv6Host(url.hostname)) {
    throw new InvalidShareLinkError(
      `"${value}" is not an origin: its host may hold only letters, digits, hyphens and dots (or be an IP address), like https://example.com`,
    );
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new InvalidShareLinkError(`"${value}": only https origins may embed the page`);
  }
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '') {
    throw new InvalidShareLinkError(`"${value}" is not an origin: scheme, host and port only`);
  }
  return url.origin;
}

/** Whether a stored value is an origin as validFrameAncestor writes it (rows made before its rule may hold others). */
export function isFrameAncestor(value: string): boolean {
  try {
    return validFrameAncestor(value) === value;
  } catch {
    return false;
  }
}

export function validFrameAncestors(values: readonly string[]): string[] {
  const origins = [...new Set(values.filter((v) => v.trim() !== '').map(validFrameAncestor))];
  if (origins.length > MAX_FRAME_ANCESTORS) {
    throw new InvalidShareLinkError(`at most ${MAX_FRAME_ANCESTORS} origins may embed a share page`);
  }
  return origins;
}

/** What a record reads of its feed, included with every row. */
const WITH_FEED = { feed: { select: { revokedAt: true } } } as const;

function toRecord(row: ShareLink & { feed: { revokedAt: Date | null } }): ShareLinkRecord {
  return {
    id: row.id,
    feedId: row.feedId,
    label: row.label,
    expiresAt: row.expiresAt,
    frameAncestors: row.frameAncestors,
    createdAt: row.createdAt,
    revokedAt: row.revokedAt,
    feedRevokedAt: row.feed.revokedAt,
    lastOpenedAt: row.lastOpenedAt,
    secretRecoverable: row.secretSealed !== null,
  };
}

export function createShareLinkStore(prisma: PrismaClient, vault?: TokenVault): ShareLinkStore {
  async function findRow(linkId: string) {
    const row = UUID.test(linkId)
      ? await prisma.shareLink.findUnique({ where: { id: linkId }, include: WITH_FEED })
      : null;
    if (!row) throw new ShareLinkNotFoundError(linkId);
    return row;
  }

  return {
    async create(input) {
      const label = validShareLabel(input.label);
      const frameAncestors = validFrameAncestors(input.frameAncestors ?? []);
      const feed = UUID.test(input.feedId)
        ? await prisma.feed.findFirst({ where: { id: input.feedId, revokedAt: null }, select: { id: true } })
        : null;
      if (!feed) throw new FeedNotFoundError(input.feedId);
      const secret = newFeedToken();
      const row = await prisma.$transaction(async (tx) => {
        const created = await tx.shareLink.create({
          data: {
            feedId: feed.id,
            label,
            secretHash: new Uint8Array(hashShareSecret(secret)),
            expiresAt: input.expiresAt,
            frameAncestors,
            createdAt: input.now,
          },
          include: WITH_FEED,
        });
        if (vault === undefined) return created;
        return tx.shareLink.update({
          where: { id: created.id },
          data: { secretSealed: vault.seal(secret, sealingContext(created.id)) },
          include: WITH_FEED,
        });
      });
      return { link: toRecord(row), secret };
    },

    async list(filter = {}) {
      const rows = await prisma.shareLink.findMany({
        where: {
          ...(filter.feedIds === undefined ? {} : { feedId: { in: [...filter.feedIds] } }),
          ...(filter.includeRevoked ? {} : { revokedAt: null, feed: { revokedAt: null } }),
        },
        orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
        include: WITH_FEED,
      });
      return rows.map(toRecord);
    },

    get: async (linkId) => toRecord(await findRow(linkId)),

    async revoke(linkId, now) {
      const row = await findRow(linkId);
      if (row.revokedAt) return { revokedAt: row.revokedAt, alreadyRevoked: true };
      const { count } = await prisma.shareLink.updateMany({
        where: { id: linkId, revokedAt: null },
        data: { revokedAt: now },
      });
      if (count === 1) return { revokedAt: now, alreadyRevoked: false };
      return { revokedAt: (await findRow(linkId)).revokedAt ?? now, alreadyRevoked: true };
    },

    async revealSecret(linkId) {
      const row = await findRow(linkId);
      if (row.secretSealed === null || row.revokedAt !== null || vault === undefined) return null;
      return vault.open(row.secretSealed, sealingContext(row.id));
    },

    async resolveSecretHash(secretHash) {
      // Every share request asks this (a revocation must hold at once): one indexed join, written out.
      const rows = await prisma.$queryRaw<ResolvedRow[]>`
        SELECT s.id, s.feed_id, s.label, s.expires_at, s.frame_ancestors, s.created_at, s.revoked_at,
               s.last_opened_at, s.secret_sealed IS NOT NULL AS secret_recoverable,
               f.token_hash AS feed_token_hash, f.revoked_at AS feed_revoked_at
        FROM share_link s JOIN feed f ON f.id = s.feed_id
        WHERE s.secret_hash = ${new Uint8Array(secretHash)}`;
      const [row] = rows;
      if (!row) return undefined;
      return {
        link: {
          id: row.id,
          feedId: row.feed_id,
          label: row.label,
          expiresAt: row.expires_at,
          frameAncestors: row.frame_ancestors,
          createdAt: row.created_at,
          revokedAt: row.revoked_at,
          feedRevokedAt: row.feed_revoked_at,
          lastOpenedAt: row.last_opened_at,
          secretRecoverable: row.secret_recoverable,
        },
        feedTokenHash: Buffer.from(row.feed_token_hash),
      };
    },

    async feedZone(feedId) {
      const feed = UUID.test(feedId)
        ? await prisma.feed.findUnique({
            where: { id: feedId },
            select: { connection: { select: { timezone: true } } },
          })
        : null;
      if (!feed) throw new FeedNotFoundError(feedId);
      return feed.connection?.timezone ?? 'UTC';
    },

    async markOpened(link, now) {
      if (link.lastOpenedAt !== null && now.getTime() - link.lastOpenedAt.getTime() < OPENED_EVERY_MS) return;
      await prisma.shareLink.updateMany({ where: { id: link.id }, data: { lastOpenedAt: now } });
    },
  };
}

/**
 * When a link made now expires, from what a person writes: `never`, a number of days (`7` or `7d`: that many
 * 24-hour days from now), or a date `YYYY-MM-DD` (the link works through that whole day in `zone`). Refuses
 * anything else, and a date already past, with the reason.
 */
export function shareLinkExpiry(spec: string, zone: string, now: Date): Date | null {
  const value = spec.trim().toLowerCase();
  if (value === '' || value === 'never') return null;
  const days = /^(\d{1,4})\s*d?$/.exec(value);
  if (days) {
    const count = Number(days[1]);
    if (count < 1 || count > 3660) throw new InvalidShareLinkError('a share link lasts 1 to 3660 days');
    return new Date(now.getTime() + count * 86_400_000);
  }
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    // A zone stored from the upstream that this server's luxon (ICU) does not know: a date cannot be read in
    // it, and reading it in another would end the link hours off.
    if (!IANAZone.isValidZone(zone)) {
      throw new InvalidShareLinkError(
        `"${spec}" cannot be read as a date: the account's time zone "${zone}" is not one this server knows; give a number of days (7d) instead`,
      );
    }
    const end = DateTime.fromISO(value, { zone }).plus({ days: 1 }).startOf('day');
    if (!end.isValid) throw new InvalidShareLinkError(`"${spec}" is not a date`);
    if (end.toMillis() <= now.getTime()) throw new InvalidShareLinkError(`${value} has passed already`);
    return end.toJSDate();
  }
  throw new InvalidShareLinkError(
    `"${spec}": an expiry is "never", a number of days (7d) or a date (YYYY-MM-DD)`,
  );
}
