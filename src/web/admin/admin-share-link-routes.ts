// The administrator's share link actions (issue 37): make one for any active feed, a person's or a team's, and
// revoke any. Both answer 303 back to the page the feed is shown on. The guard (admin-auth.ts requireAdmin) has
// checked the credential and the form's origin.
import type { FastifyInstance } from 'fastify';
import { FeedNotFoundError, type FeedRecord } from '../../store/feeds.js';
import { ShareLinkNotFoundError } from '../../store/share-links.js';
import { seeOther } from '../form-replies.js';
import { HttpError } from '../http-error.js';
import { shareLinkFromForm } from '../share-links-section.js';
import type { WebDeps } from '../web-deps.js';
import { connectionPagePath } from './admin-connection-page.js';
import { ADMIN_TEAMS } from './admin-team-pages.js';

const pageOf = (feed: FeedRecord) =>
  feed.connectionId === null ? ADMIN_TEAMS : connectionPagePath(feed.connectionId);

export function registerAdminShareLinkRoutes(app: FastifyInstance, deps: WebDeps): void {
  async function activeFeed(feedId: string): Promise<FeedRecord> {
    const feed = await deps.feeds.get(feedId).catch((thrown: unknown) => {
      if (thrown instanceof FeedNotFoundError) return undefined;
      throw thrown;
    });
    if (feed === undefined || feed.revokedAt !== null)
      throw new HttpError(404, 'No such feed, or it is revoked.');
    return feed;
  }

  app.post<{ Params: { id: string } }>('/admin/feeds/:id/share-links', async (request, reply) => {
    const feed = await activeFeed(request.params.id);
    const zone =
      feed.connectionId === null
        ? 'UTC'
        : ((await deps.connections.get(feed.connectionId)).timezone ?? 'UTC');
    const link = await shareLinkFromForm(deps.shareLinks, feed.id, zone, request.body, deps.now());
    request.log.info({ shareLinkId: link.id, feedId: feed.id }, 'admin made a share link');
    return seeOther(reply, `${pageOf(feed)}?notice=share-created#share-links-${feed.id}`);
  });

  app.post<{ Params: { id: string } }>('/admin/share-links/:id/revoke', async (request, reply) => {
    const link = await deps.shareLinks.get(request.params.id).catch((thrown: unknown) => {
      if (thrown instanceof ShareLinkNotFoundError) throw new HttpError(404, 'No such share link.');
      throw thrown;
    });
    await deps.shareLinks.revoke(link.id, deps.now());
    request.log.info({ shareLinkId: link.id, feedId: link.feedId }, 'admin revoked a share link');
    const feed = await deps.feeds.get(link.feedId);
    return seeOther(reply, `${pageOf(feed)}?notice=share-revoked#share-links-${feed.id}`);
  });
}
