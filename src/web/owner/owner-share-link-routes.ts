// The owner's share link actions on /me (issue 37): make one for a feed of their own, and revoke one. Both are
// POST forms from our own origin answered with 303 back to /me and a notice; a feed or link that is not the
// owner's is a 404, as an unknown one is.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FeedRecord } from '../../store/feeds.js';
import { ShareLinkNotFoundError } from '../../store/share-links.js';
import { seeOther } from '../form-replies.js';
import { HttpError } from '../http-error.js';
import { shareLinkFromForm } from '../share-links-section.js';
import type { WebDeps } from '../web-deps.js';
import { NOT_YOURS } from './owner-pages.js';

type IdParams = { Params: { id: string } };

export function registerOwnerShareLinkRoutes(
  app: FastifyInstance,
  deps: WebDeps,
  owner: {
    /** The owner's connection id, for a POST from our own origin. */
    ownerActing(request: FastifyRequest): Promise<string>;
    /** The owner's active feed with this id; a 404 HttpError for anyone else's, a revoked or an unknown one. */
    ownFeed(connectionId: string, feedId: string): Promise<FeedRecord>;
  },
): void {
  app.post<IdParams>('/me/feeds/:id/share-links', async (request, reply) => {
    const connectionId = await owner.ownerActing(request);
    const feed = await owner.ownFeed(connectionId, request.params.id);
    const zone = (await deps.connections.get(connectionId)).timezone ?? 'UTC';
    const link = await shareLinkFromForm(deps.shareLinks, feed.id, zone, request.body, deps.now());
    request.log.info({ shareLinkId: link.id, feedId: feed.id, connectionId }, 'owner made a share link');
    return seeOther(reply, `/me?notice=share-created#share-links-${feed.id}`);
  });

  app.post<IdParams>('/me/share-links/:id/revoke', async (request, reply) => {
    const connectionId = await owner.ownerActing(request);
    const link = await deps.shareLinks.get(request.params.id).catch((thrown: unknown) => {
      if (thrown instanceof ShareLinkNotFoundError) throw new HttpError(404, NOT_YOURS);
      throw thrown;
    });
    await owner.ownFeed(connectionId, link.feedId);
    await deps.shareLinks.revoke(link.id, deps.now());
    request.log.info(
      { shareLinkId: link.id, feedId: link.feedId, connectionId },
      'owner revoked a share link',
    );
    return seeOther(reply, `/me?notice=share-revoked#share-links-${link.feedId}`);
  });
}
