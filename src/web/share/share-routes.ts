// A share link's addresses (issue 37): GET /share/{secret} (the page), /share/{secret}/embed (the page for an
// iframe, framed only from the link's own origins), /share/{secret}.txt (the week as text) and
// /share/{secret}.ics (the feed, for the subscribe buttons). Every request asks Postgres for the link, so a
// revocation or an expiry holds from the next request on; what the page shows comes from the feed's remembered
// lookup and a render kept per link, week, zone and version of what it shows, so an unchanged page costs one
// indexed read and a hash comparison. Unknown and revoked links get the same 404, an expired one a 410.
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { DateTime } from 'luxon';
import { formatHttpDate } from '../../lib/http-date.js';
import { feedFreeTime, showsFreeTime, daysShown } from '../../serving/feed-free-time.js';
import type { FeedServing } from '../../serving/feed-serving.js';
import { feedWindow } from '../../serving/feed-window.js';
import { TEAM_FEED_ZONE } from '../../serving/feed-content.js';
import type { ResolvedFeed } from '../../store/feeds.js';
import { hashShareSecret, isFrameAncestor, type ShareLinkRecord } from '../../store/share-links.js';
import { acceptsGzip } from '../accept-encoding.js';
import { isNotModified } from '../conditional-get.js';
import { feedLinksForUrl } from '../feed-links.js';
import { feedTitle } from '../../feeds/feed-title.js';
import type { WebDeps } from '../web-deps.js';
import { renderShareGonePage, renderSharePage } from './share-page.js';
import { copyText, shareWeek, shownDays, validZone, type ShareWeek } from './share-week.js';
import { localWords, viewerLocale } from './viewer-locale.js';

export const SHARE_PATH = '/share';
// Every address of a link (the page, its text, its feed) is revalidated every time: a revoked or expired link
// must not live on in a browser's or a calendar app's cache. A revalidation with the ETag costs one indexed read
// and a 304 while the link lasts, and gets the 404 or 410 from the next request after it ends.
const REVALIDATED = 'private, no-cache';
const MAX_RENDERS = 2_000;

interface Rendered {
  body: Buffer;
  gzipped: Buffer | undefined;
  tag: string;
  lastModified: Date;
  type: string;
}

type Found =
  | { kind: 'open'; link: ShareLinkRecord; resolved: ResolvedFeed; feedTokenHash: Buffer }
  | { kind: 'gone'; status: 404 | 410 };

/**
 * The share page's own headers: never framed (but from the link's origins), no Referer, not indexed. Only
 * origins as the stores accept them now reach frame-ancestors: a row made before that rule may hold a wildcard or
 * a `;` that would widen or end the directive.
 */
export function shareSecurityHeaders(frameAncestors: readonly string[] | null): Record<string, string> {
  const origins = (frameAncestors ?? []).filter(isFrameAncestor);
  const ancestors = origins.length === 0 ? "'none'" : origins.join(' ');
  return {
    'content-security-policy': [
      "default-src 'none'",
      "style-src 'self'",
      "script-src 'self'",
      "img-src 'self' data:",
      "connect-src 'none'",
      "form-action 'self'",
      "base-uri 'none'",
      `frame-ancestors ${ancestors}`,
    ].join('; '),
    'referrer-policy': 'no-referrer',
    'x-robots-tag': 'noindex, nofollow',
    'x-content-type-options': 'nosniff',
  };
}

function ownerZoneOf(resolved: ResolvedFeed): string {
  if (resolved.kind === 'team') return TEAM_FEED_ZONE;
  return validZone(resolved.connection.timezone ?? undefined) ?? 'UTC';
}

function ownerNameOf(resolved: ResolvedFeed): string {
  if (resolved.kind === 'team') return resolved.team.name;
  return resolved.connection.displayName?.trim() || resolved.connection.email?.trim() || 'Someone';
}

/** Everything the bytes of a render depend on besides the week and zone asked for. */
function versionOf(link: ShareLinkRecord, resolved: ResolvedFeed): string {
  const { feed } = resolved;
  const owner =
    resolved.kind === 'connection'
      ? `${resolved.connection.feedVersion}:${resolved.connection.status}:${resolved.connection.displayName}:${resolved.connection.timezone}`
      : `${resolved.team.name}:${resolved.team.membersChangedAt.getTime()}:${resolved.team.members.map((m) => `${m.id}.${m.feedVersion}.${m.displayName}`).join(',')}`;
  return [
    link.id,
    link.expiresAt?.getTime() ?? '',
    link.frameAncestors.join(' '),
    feed.id,
    feed.label ?? '',
    feed.labelChangedAt?.getTime() ?? '',
    feed.inputsChangedAt?.getTime() ?? '',
    JSON.stringify(feed.options),
    owner,
  ].join('|');
}

export function registerShareRoutes(app: FastifyInstance, deps: WebDeps, serving: FeedServing): void {
  const renders = new LRUCache<string, Rendered>({ max: MAX_RENDERS });
  const weeks = new LRUCache<string, ShareWeek>({ max: MAX_RENDERS });
  const base = deps.settings.publicBaseUrl.replace(/\/+$/, '');

  async function find(secret: string): Promise<Found> {
    const found = await deps.shareLinks.resolveSecretHash(hashShareSecret(secret));
    if (found === undefined || found.link.revokedAt !== null || found.link.feedRevokedAt !== null) {
      return { kind: 'gone', status: 404 };
    }
    const now = deps.now();
    if (found.link.expiresAt !== null && found.link.expiresAt.getTime() <= now.getTime()) {
      return { kind: 'gone', status: 410 };
    }
    const hash = found.feedTokenHash;
    const resolved = await serving.resolve({ hash, key: hash.toString('base64') });
    if (resolved === undefined) return { kind: 'gone', status: 404 };
    await deps.shareLinks.markOpened(found.link, now);
    return { kind: 'open', link: found.link, resolved, feedTokenHash: hash };
  }

  function sendGone(request: FastifyRequest, reply: FastifyReply, status: 404 | 410, asText: boolean) {
    reply.code(status).headers({ ...shareSecurityHeaders(null), 'cache-control': 'no-store' });
    if (asText || request.method === 'HEAD') {
      return reply
        .type('text/plain; charset=utf-8')
        .send(status === 410 ? 'This share link has expired.\n' : 'No such share link.\n');
    }
    return reply.type('text/html; charset=utf-8').send(renderShareGonePage(status));
  }

  function sendRendered(
    request: FastifyRequest,
    reply: FastifyReply,
    rendered: Rendered,
    headers: Record<string, string>,
    /** The request headers the answer depends on besides the path. */
    vary = 'Accept-Encoding',
  ) {
    const gzip = rendered.gzipped !== undefined && acceptsGzip(request.headers['accept-encoding']);
    const etag = `"${gzip ? `${rendered.tag}-gzip` : rendered.tag}"`;
    reply
      .headers(headers)
      .header('etag', etag)
      .header('last-modified', formatHttpDate(rendered.lastModified))
      .header('vary', vary);
    const notModified = isNotModified(
      {
        ifNoneMatch: request.headers['if-none-match'],
        ifModifiedSince: request.headers['if-modified-since'],
      },
      { opaqueTags: [rendered.tag, `${rendered.tag}-gzip`], lastModified: rendered.lastModified },
    );
    if (notModified) return reply.code(304).send();
    reply.type(rendered.type);
    if (gzip && rendered.gzipped) return reply.header('content-encoding', 'gzip').send(rendered.gzipped);
    return reply.send(rendered.body);
  }

  /** The page or its text for one week and zone, rendered once per version of what it shows. */
  async function renderWeek(
    open: Extract<Found, { kind: 'open' }>,
    secret: string,
    form: 'page' | 'embed' | 'text',
    query: { week?: string; zone?: string },
    locale: string,
  ): Promise<Rendered> {
    const { link, resolved } = open;
    const now = deps.now();
    const ownerZone = ownerZoneOf(resolved);
    const zone = validZone(query.zone) ?? ownerZone;
    const days = daysShown(resolved.feed, deps.settings.feedDefaultDays);
    const feedDays = feedWindow(now, ownerZone, days);
    const shownEnd = feedDays.windowEnd;
    const index = Number.parseInt(query.week ?? '0', 10) || 0;
    const today = feedWindow(now, zone, 1);
    // luxon's zone arithmetic costs more than the rest of a kept render: a week holds until the zone's day ends
    // (feedWindow's key moves then).
    const weekKey = `${today.windowKey}|${zone}|${index}|${shownEnd.getTime()}`;
    let week = weeks.get(weekKey);
    if (week === undefined) {
      week = shareWeek(now, zone, index, shownEnd);
      weeks.set(weekKey, week);
    }
    const key = `${form}|${locale}|${week.windowKey}|${shownEnd.getTime()}|${versionOf(link, resolved)}`;
    const kept = renders.get(key);
    if (kept) return kept;

    const freeTime = await feedFreeTime(deps.feedContent, resolved, {
      range: week,
      defaultDays: deps.settings.feedDefaultDays,
      now,
    });
    const words = localWords(locale);
    const shown = shownDays(week, freeTime.blocks, words);
    const text = copyText(shown, zone);
    // What is shown moves with no write at all at midnight, whichever week is asked for: in the zone asked for
    // (the week's days), and in the owner's (where the feed's days start and end). The heading moves with the
    // feed's label.
    const lastModified = new Date(
      Math.max(
        freeTime.changedAt?.getTime() ?? 0,
        link.createdAt.getTime(),
        resolved.feed.labelChangedAt?.getTime() ?? 0,
        today.windowStart.getTime(),
        feedDays.windowStart.getTime(),
      ),
    );
    let body: string;
    let type: string;
    if (form === 'text') {
      body = text;
      type = 'text/plain; charset=utf-8';
    } else {
      const name = await deps.feedNames.calendarName(resolved.feed);
      const eventTitle =
        resolved.kind === 'connection' && resolved.feed.upstreamEventId !== null
          ? ((await deps.feedContent.currentEventTypes(resolved.connection.id)).find(
              (e) => e.id === resolved.feed.upstreamEventId,
            )?.title ?? null)
          : null;
      const path = `${SHARE_PATH}/${encodeURIComponent(secret)}`;
      const icsUrl = `${base}${path}.ics`;
      body = renderSharePage({
        ownerName: ownerNameOf(resolved),
        feedTitle: feedTitle({ feed: resolved.feed, eventTitle, name }),
        ownerZone,
        week,
        days: shown,
        copyText: text,
        showsFreeTime: resolved.kind === 'team' || showsFreeTime(resolved.feed),
        path: form === 'embed' ? `${path}/embed` : path,
        textPath: `${path}.txt`,
        subscribe: { ...feedLinksForUrl(icsUrl, name), download: `${path}.ics` },
        expiresAt:
          link.expiresAt === null
            ? null
            : `${words.dateAndTime(DateTime.fromJSDate(link.expiresAt, { zone }))} ${zone}`,
        embedded: form === 'embed',
      });
      type = 'text/html; charset=utf-8';
    }
    const bytes = Buffer.from(body, 'utf8');
    const rendered: Rendered = {
      body: bytes,
      gzipped: bytes.length > 1024 ? gzipSync(bytes) : undefined,
      tag: createHash('sha256').update(bytes).digest('base64url').slice(0, 27),
      lastModified,
      type,
    };
    renders.set(key, rendered);
    return rendered;
  }

  // The page and its text are written in the viewer's language (viewer-locale.ts).
  const BY_LANGUAGE = 'Accept-Encoding, Accept-Language';
  const pageHeaders = (link: ShareLinkRecord, embedded: boolean) => ({
    ...shareSecurityHeaders(embedded ? link.frameAncestors : null),
    'cache-control': REVALIDATED,
  });

  type ShareRoute = { Params: { secret: string }; Querystring: { week?: string; zone?: string } };

  // One route per address, each naming its secret `:secret`: the route table says which paths carry a secret
  // (test/security/secrets-in-paths.test.ts requests every one of them and reads the log).
  app.get<ShareRoute>(`${SHARE_PATH}/:secret.ics`, async (request, reply) => {
    const found = await find(request.params.secret);
    if (found.kind === 'gone') return sendGone(request, reply, found.status, true);
    const current = await serving.current({
      hash: found.feedTokenHash,
      key: found.feedTokenHash.toString('base64'),
    });
    if (current === undefined) return sendGone(request, reply, 404, true);
    const { rendered } = current;
    return sendRendered(
      request,
      reply,
      {
        body: rendered.body,
        gzipped: rendered.gzipped,
        tag: rendered.tag,
        lastModified: rendered.lastModified,
        type: 'text/calendar; charset=utf-8',
      },
      {
        ...shareSecurityHeaders(null),
        'cache-control': REVALIDATED,
        'content-disposition': 'inline; filename="free-time.ics"',
      },
    );
  });

  /** The page, its embed or its text, as the request asks: week, zone, and the viewer's language. */
  async function sendWeek(
    request: FastifyRequest<ShareRoute>,
    reply: FastifyReply,
    form: 'page' | 'embed' | 'text',
  ) {
    const found = await find(request.params.secret);
    if (found.kind === 'gone') return sendGone(request, reply, found.status, form === 'text');
    const locale = viewerLocale(request.headers['accept-language']);
    const rendered = await renderWeek(found, request.params.secret, form, request.query, locale);
    return sendRendered(request, reply, rendered, pageHeaders(found.link, form === 'embed'), BY_LANGUAGE);
  }

  app.get<ShareRoute>(`${SHARE_PATH}/:secret`, (request, reply) => sendWeek(request, reply, 'page'));
  app.get<ShareRoute>(`${SHARE_PATH}/:secret.txt`, (request, reply) => sendWeek(request, reply, 'text'));
  app.get<ShareRoute>(`${SHARE_PATH}/:secret/embed`, (request, reply) => sendWeek(request, reply, 'embed'));
}
