// Share links through the JSON API (issue 37): list a feed's links, make one (its address is in that answer
// only), revoke one. Only an API key whose scope holds the feed's connection or team may; a feed's token reads
// availability only, and is answered as if the feed did not exist (404), as is a feed outside the key's scope.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { FeedNotFoundError, type FeedRecord } from '../../store/feeds.js';
import {
  InvalidShareLinkError,
  ShareLinkNotFoundError,
  shareLinkExpiry,
  type ShareLinkRecord,
} from '../../store/share-links.js';
import { HttpError } from '../http-error.js';
import { shareUrlOf } from '../share-links-section.js';
import type { WebDeps } from '../web-deps.js';
import type { ApiAccessResolver } from './api-access.js';
import { latest, REVALIDATED, sendData } from './api-answers.js';
import {
  feedParams,
  NOT_MODIFIED,
  PROBLEMS,
  shareLinkBody,
  shareLinkCreatedResponse,
  shareLinkParams,
  shareLinkResponse,
  shareLinksResponse,
} from './api-schemas.js';

const NO_SUCH_FEED = 'No such feed, or this credential may not manage its share links.';
const SECURITY = [{ bearer: [] }];

const answerOf = (link: ShareLinkRecord) => ({
  id: link.id,
  feedId: link.feedId,
  label: link.label,
  expiresAt: link.expiresAt?.toISOString() ?? null,
  embedOrigins: link.frameAncestors,
  createdAt: link.createdAt.toISOString(),
  revokedAt: link.revokedAt?.toISOString() ?? null,
  lastOpenedAt: link.lastOpenedAt?.toISOString() ?? null,
});

export function registerApiShareLinkRoutes(
  app: FastifyInstance,
  deps: WebDeps,
  access: ApiAccessResolver,
  routeOptions: object,
  prefix: string,
): void {
  const api = app.withTypeProvider<ZodTypeProvider>();

  /** The active feed, when the request's credential is an API key whose scope holds its owner; else 404. */
  async function managedFeed(
    request: Parameters<ApiAccessResolver['of']>[0],
    feedId: string,
  ): Promise<FeedRecord> {
    const credential = await access.of(request);
    const feed = await deps.feeds.get(feedId).catch((thrown: unknown) => {
      if (thrown instanceof FeedNotFoundError) return undefined;
      throw thrown;
    });
    const inScope =
      credential.kind === 'key' &&
      feed !== undefined &&
      feed.revokedAt === null &&
      ((feed.connectionId !== null && credential.key.connectionIds.includes(feed.connectionId)) ||
        (feed.teamId !== null && credential.key.teamIds.includes(feed.teamId)));
    if (!inScope || feed === undefined) throw new HttpError(404, NO_SUCH_FEED);
    return feed;
  }

  api.get(
    `${prefix}/feeds/:feedId/share-links`,
    {
      ...routeOptions,
      schema: {
        summary: 'A feed’s share links (never their addresses)',
        tags: ['share links'],
        security: SECURITY,
        params: feedParams,
        response: { 200: shareLinksResponse, 304: NOT_MODIFIED, ...PROBLEMS },
      },
    },
    async (request, reply) => {
      const feed = await managedFeed(request, request.params.feedId);
      const links = await deps.shareLinks.list({ feedIds: [feed.id], includeRevoked: true });
      const ordered = [
        ...links.filter((l) => l.revokedAt === null),
        ...links.filter((l) => l.revokedAt !== null),
      ];
      // Every time the answer shows moves its Last-Modified: a link made, revoked or opened.
      const lastModified = latest(
        feed.createdAt,
        ...links.flatMap((l) => [l.createdAt, l.revokedAt, l.lastOpenedAt]),
      );
      return sendData(
        request,
        reply,
        shareLinksResponse,
        { feedId: feed.id, shareLinks: ordered.map(answerOf) },
        lastModified,
        REVALIDATED,
      );
    },
  );

  api.post(
    `${prefix}/feeds/:feedId/share-links`,
    {
      ...routeOptions,
      schema: {
        summary: 'Make a share link of a feed: a page of its free time for anyone with the address',
        tags: ['share links'],
        security: SECURITY,
        params: feedParams,
        body: shareLinkBody,
        response: { 201: shareLinkCreatedResponse, ...PROBLEMS },
      },
    },
    async (request, reply) => {
      const feed = await managedFeed(request, request.params.feedId);
      const { label, expires = 'never', embedOrigins = [] } = request.body;
      try {
        const now = deps.now();
        const { link, secret } = await deps.shareLinks.create({
          feedId: feed.id,
          label,
          expiresAt: shareLinkExpiry(expires, await deps.shareLinks.feedZone(feed.id), now),
          frameAncestors: embedOrigins,
          now,
        });
        return reply
          .code(201)
          .header('cache-control', 'no-store')
          .send({ shareLink: answerOf(link), url: shareUrlOf(deps.settings.publicBaseUrl, secret) });
      } catch (thrown: unknown) {
        if (thrown instanceof InvalidShareLinkError) throw new HttpError(400, thrown.message);
        throw thrown;
      }
    },
  );

  api.delete(
    `${prefix}/feeds/:feedId/share-links/:shareLinkId`,
    {
      ...routeOptions,
      schema: {
        summary: 'Revoke a share link: its page answers 404 from the next request on',
        tags: ['share links'],
        security: SECURITY,
        params: shareLinkParams,
        response: { 200: shareLinkResponse, ...PROBLEMS },
      },
    },
    async (request, reply) => {
      const feed = await managedFeed(request, request.params.feedId);
      const link = await deps.shareLinks.get(request.params.shareLinkId).catch((thrown: unknown) => {
        if (thrown instanceof ShareLinkNotFoundError) return undefined;
        throw thrown;
      });
      if (link === undefined || link.feedId !== feed.id)
        throw new HttpError(404, 'No such share link of this feed.');
      await deps.shareLinks.revoke(link.id, deps.now());
      return reply
        .header('cache-control', 'no-store')
        .send({ shareLink: answerOf(await deps.shareLinks.get(link.id)) });
    },
  );
}
