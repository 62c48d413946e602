// The owner's own page and its actions. GET /me shows "Your availability"; every action is a POST form from
// our own origin answered with 303 back to /me and a notice (POST/redirect/GET), so a reload never repeats
// one. An owner acts only on their own connection: a feed or team of anyone else's is a 404, as an unknown
// one is, so ids cannot be probed.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import QRCode from 'qrcode';
import { feedCalendarName } from '../../feeds/describe-feed.js';
import {
  DEFAULT_FEED_VIEW,
  FEED_VIEWS,
  feedOptionsSchema,
  normalizeFeedOptions,
} from '../../feeds/feed-options.js';
import { RedisUnavailableError, whileRedisAnswers } from '../../lib/redis-errors.js';
import { ConnectionNotFoundError } from '../../store/connections.js';
import { FeedNotFoundError, type FeedRecord } from '../../store/feeds.js';
import {
  WebhookEndpointNotFoundError,
  WebhookTargetError,
  type WebhookEndpointRecord,
} from '../../store/webhooks.js';
import type { TeamRecord } from '../../store/teams.js';
import { noteForAccessLog } from '../access-log.js';
import { registerCaldavActions } from '../caldav/caldav-destination-actions.js';
import { registerCaldavCleanupActions } from '../caldav/caldav-cleanups-section.js';
import {
  destinationViewsByFeed,
  OWNER_CALDAV_PATHS,
  type CaldavFormState,
} from '../caldav/caldav-destinations-section.js';
import { feedLinksFor, isLoopbackBaseUrl } from '../feed-links.js';
import { html } from '../html.js';
import { asSentence, HttpError } from '../http-error.js';
import type { OwnerAuth } from './owner-auth.js';
import { feedTitle, type OwnerFeed } from './owner-feed-cards.js';
import { registerOwnerShareLinkRoutes } from './owner-share-link-routes.js';
import {
  deletedPage,
  NOT_YOURS,
  OWNER_CLEANUP_PATHS,
  OWNER_NOTICES,
  ownerHomePage,
  signedOutPage,
} from './owner-pages.js';
import {
  OWNER_DELIVERY_LOG_LENGTH,
  testedWebhookLocation,
  webhookSecretPage,
  type OwnerWebhooks,
} from './owner-webhooks-section.js';
import { weekPreviewSection } from './week-preview.js';
import type { WebDeps } from '../web-deps.js';
import { field, seeOther } from '../form-replies.js';
import { shareLinkViews } from '../share-links-section.js';

type IdParams = { Params: { id: string } };

export function registerOwnerRoutes(
  app: FastifyInstance,
  deps: WebDeps,
  owners: OwnerAuth,
  assertSameOrigin: (request: FastifyRequest) => void,
): void {
  const teams = deps.teams;
  const loopback = isLoopbackBaseUrl(deps.settings.publicBaseUrl);

  /** The owner's connection id, for a POST from our own origin. */
  async function ownerActing(request: FastifyRequest): Promise<string> {
    assertSameOrigin(request);
    return owners.requireOwner(request);
  }

  /** The owner's active feed with this id; 404 for anyone else's, a revoked or an unknown one. */
  async function ownFeed(connectionId: string, feedId: string): Promise<FeedRecord> {
    const feed = await deps.feeds.get(feedId).catch((thrown: unknown) => {
      if (thrown instanceof FeedNotFoundError) return undefined;
      throw thrown;
    });
    if (feed === undefined || feed.connectionId !== connectionId || feed.revokedAt !== null) {
      throw new HttpError(404, NOT_YOURS);
    }
    return feed;
  }

  async function ownerFeeds(
    connection: { displayName: string | null; email: string | null; id: string },
    titles: Map<string, string>,
  ): Promise<OwnerFeed[]> {
    const feeds = await deps.feeds.list({ connectionId: connection.id });
    return Promise.all(
      feeds.map(async (feed): Promise<OwnerFeed> => {
        const eventTitle = feed.upstreamEventId === null ? null : (titles.get(feed.upstreamEventId) ?? null);
        const name = feedCalendarName({
          displayName: connection.displayName,
          email: connection.email,
          ...(eventTitle === null ? {} : { eventTitle }),
        });
        return { feed, eventTitle, name, ...(await linksOf(feed, name)) };
      }),
    );
  }

  /** The subscribe links of a feed whose token was kept, and its QR code; nulls when it was not. */
  async function linksOf(feed: FeedRecord, name: string): Promise<Pick<OwnerFeed, 'links' | 'qrSvg'>> {
    const token = await deps.feeds.revealToken(feed.id);
    if (token === null) return { links: null, qrSvg: null };
    const links = feedLinksFor(deps.settings.publicBaseUrl, token, name);
    const qrSvg = await QRCode.toString(links.webcal, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
    return { links, qrSvg };
  }

  /** Each team's active feeds, for its members to subscribe to (only an administrator changes them). */
  async function teamFeedsOf(memberOf: TeamRecord[]): Promise<Map<string, OwnerFeed[]>> {
    const entries = await Promise.all(
      memberOf.map(async (team): Promise<[string, OwnerFeed[]]> => {
        const feeds = await deps.feeds.list({ teamId: team.id });
        const items = await Promise.all(
          feeds.map(async (feed) => {
            const name = await deps.feedNames.calendarName(feed);
            return { feed, eventTitle: null, name, ...(await linksOf(feed, name)) };
          }),
        );
        return [team.id, items];
      }),
    );
    return new Map(entries);
  }

  /** The owner's endpoints with their latest deliveries, for the page's webhooks section. */
  async function ownerWebhooks(connectionId: string, tested: string): Promise<OwnerWebhooks> {
    const endpoints = await deps.webhooks.list({ connectionId });
    return {
      endpoints: await Promise.all(
        endpoints.map(async (endpoint) => ({
          endpoint,
          deliveries: await deps.webhooks.deliveries(endpoint.id, OWNER_DELIVERY_LOG_LENGTH),
        })),
      ),
      ...(tested === '' ? {} : { tested }),
    };
  }

  /** The owner's endpoint with this id; 404 for anyone else's or an unknown one. */
  async function ownEndpoint(connectionId: string, endpointId: string): Promise<WebhookEndpointRecord> {
    const own = (await deps.webhooks.list({ connectionId })).find((e) => e.id === endpointId);
    if (!own) throw new HttpError(404, 'No such webhook endpoint on your account.');
    return own;
  }

  /**
   * "Your availability" for a signed-in owner (the signed-out page without a session). With `failed`: a CalDAV
   * form that failed is shown again as typed, and the page answers `failed.status`.
   */
  async function showOwnerHome(
    request: FastifyRequest,
    reply: FastifyReply,
    failed?: { status: number; form: CaldavFormState },
  ): Promise<FastifyReply> {
    const connectionId = await owners.connectionOf(request);
    if (connectionId === undefined) return signedOutPage(reply, 200);
    let connection;
    try {
      connection = await deps.connections.get(connectionId);
    } catch (thrown: unknown) {
      // Deleted by an administrator meanwhile: the session is worth nothing now.
      if (!(thrown instanceof ConnectionNotFoundError)) throw thrown;
      await owners.signOut(request, reply);
      return signedOutPage(reply, 200, 'Your connection no longer exists here. Connect again to start anew.');
    }
    const eventTypes = await deps.connectionAdmin.currentEventTypes(connectionId);
    const titles = new Map(eventTypes.map((e) => [e.id, e.title]));
    const feeds = await ownerFeeds(connection, titles);
    const memberOf = await teams.teamsOf(connectionId);
    const teamFeeds = await teamFeedsOf(memberOf);
    // The preview reads the feed the owner picked (?preview=<feed id>, one of theirs or their teams'), else
    // the first whose address can be shown: the one the owner most likely shares.
    const previewable = [...feeds, ...[...teamFeeds.values()].flat()].filter((item) => item.links !== null);
    const picked = field(request.query, 'preview');
    const shown = previewable.find((item) => item.feed.id === picked) ?? previewable[0];
    const notice = OWNER_NOTICES[field(request.query, 'notice')];
    return ownerHomePage(reply, {
      connection,
      feeds,
      eventTypes,
      teams: memberOf,
      teamFeeds,
      webhooks: await ownerWebhooks(connectionId, field(request.query, 'tested')),
      now: deps.now(),
      loopback,
      preview:
        shown === undefined || shown.links === null
          ? html``
          : weekPreviewSection({
              feedPath: new URL(shown.links.https).pathname,
              timeZone: connection.timezone,
              feedTitle: feedTitle(shown),
              now: deps.now(),
            }),
      caldav: await destinationViewsByFeed(deps.caldavDestinations, { connectionId }),
      cleanups: await deps.caldavDestinations.cleanups({ connectionId }),
      shareLinks: await shareLinkViews(
        deps.shareLinks,
        deps.settings.publicBaseUrl,
        feeds.map((item) => item.feed.id),
      ),
      ...(failed === undefined ? {} : { caldavForm: failed.form, status: failed.status }),
      ...(notice === undefined ? {} : { notice }),
    });
  }

  app.get('/me', (request, reply) => showOwnerHome(request, reply));

  registerCaldavActions(app, deps.caldavDestinations, {
    actor: 'owner',
    paths: OWNER_CALDAV_PATHS,
    async acting(request) {
      const connectionId = await ownerActing(request);
      // Team feeds are the administrator's to change (owner-teams-section.ts): an owner manages their own.
      return { feedFor: (feedId) => ownFeed(connectionId, feedId) };
    },
    pageOf: () => '/me',
    showAgain: (request, reply, _feed, status, form) => showOwnerHome(request, reply, { status, form }),
  });

  registerCaldavCleanupActions(app, deps.caldavDestinations, {
    actor: 'owner',
    path: OWNER_CLEANUP_PATHS.path,
    async mayManage(request, cleanup) {
      return cleanup.ownerConnectionId === (await ownerActing(request));
    },
    page: () => '/me',
  });

  app.post('/me/feeds', async (request, reply) => {
    const connectionId = await ownerActing(request);
    const upstreamEventId = field(request.body, 'upstreamEventId');
    const eventTypes = await deps.connectionAdmin.currentEventTypes(connectionId);
    if (upstreamEventId !== '' && !eventTypes.some((e) => e.id === upstreamEventId)) {
      throw new HttpError(400, 'Your account has no such event type.');
    }
    const days = field(request.body, 'days');
    const options = feedOptionsSchema.safeParse({
      view: field(request.body, 'view') || DEFAULT_FEED_VIEW,
      ...(days === '' ? {} : { days: Number(days) }),
    });
    if (!options.success) {
      throw new HttpError(
        400,
        `That feed cannot be made: ${options.error.issues.map((i) => i.message).join('; ')}`,
      );
    }
    const label = field(request.body, 'label').slice(0, 100);
    const { feed } = await deps.feeds.create({
      connectionId,
      upstreamEventId: upstreamEventId === '' ? null : upstreamEventId,
      label: label === '' ? null : label,
      options: options.data,
    });
    request.log.info({ feedId: feed.id, connectionId }, 'owner created a feed');
    return seeOther(reply, `/me?notice=feed-created#feed-title-${feed.id}`);
  });

  app.post<IdParams>('/me/feeds/:id/rotate', async (request, reply) => {
    const connectionId = await ownerActing(request);
    const feed = await ownFeed(connectionId, request.params.id);
    await deps.feeds.rotate(feed.id);
    // The old URL must be dead in this process before the page says so (other replicas hear it within ms).
    await deps.feedChanges.caughtUp();
    request.log.info({ feedId: feed.id }, 'owner replaced a feed address');
    return seeOther(reply, `/me?notice=rotated#feed-title-${feed.id}`);
  });

  app.post<IdParams>('/me/feeds/:id/name', async (request, reply) => {
    const connectionId = await ownerActing(request);
    const feed = await ownFeed(connectionId, request.params.id);
    const label = field(request.body, 'label').trim().slice(0, 100);
    await deps.feeds.rename(feed.id, label === '' ? null : label, deps.now());
    request.log.info({ feedId: feed.id }, 'owner renamed a feed');
    return seeOther(reply, `/me?notice=renamed#feed-title-${feed.id}`);
  });

  app.post<IdParams>('/me/feeds/:id/view', async (request, reply) => {
    const connectionId = await ownerActing(request);
    const feed = await ownFeed(connectionId, request.params.id);
    const view = FEED_VIEWS.find((v) => v === field(request.body, 'view'));
    if (view === undefined) throw new HttpError(400, 'Choose what the feed shows: one of the listed views.');
    // Options of the former view that mean nothing in the new one (merge, a title for free blocks) are dropped.
    await deps.feeds.updateOptions(feed.id, normalizeFeedOptions({ ...feed.options, view }), deps.now());
    await deps.feedChanges.caughtUp();
    request.log.info({ feedId: feed.id, view }, 'owner changed what a feed shows');
    return seeOther(reply, `/me?notice=view-changed#feed-title-${feed.id}`);
  });

  app.post<IdParams>('/me/feeds/:id/revoke', async (request, reply) => {
    const connectionId = await ownerActing(request);
    const feed = await ownFeed(connectionId, request.params.id);
    await deps.feeds.revoke(feed.id, deps.now());
    await deps.feedChanges.caughtUp();
    request.log.info({ feedId: feed.id }, 'owner revoked a feed');
    return seeOther(reply, '/me?notice=revoked');
  });

  registerOwnerShareLinkRoutes(app, deps, { ownerActing, ownFeed });

  app.post('/me/pause', async (request, reply) => {
    const connectionId = await ownerActing(request);
    await deps.connectionAdmin.setEnabled(connectionId, false, deps.now());
    return seeOther(reply, '/me?notice=paused');
  });

  app.post('/me/resume', async (request, reply) => {
    const connectionId = await ownerActing(request);
    const changed = await deps.connectionAdmin.setEnabled(connectionId, true, deps.now());
    if (changed) {
      try {
        await whileRedisAnswers(deps.redis, () => deps.enqueueSync([connectionId]));
      } catch (thrown: unknown) {
        // Resumed all the same, and due now in Postgres: the scheduler queues it once Redis is back.
        if (!(thrown instanceof RedisUnavailableError)) throw thrown;
        noteForAccessLog(request, 'warn', { redisUnavailable: thrown.reason });
      }
    }
    return seeOther(reply, '/me?notice=resumed');
  });

  app.post('/me/webhooks', async (request, reply) => {
    const connectionId = await ownerActing(request);
    try {
      const { endpoint, secret } = await deps.webhooks.create({
        owner: { connectionId },
        url: field(request.body, 'url'),
      });
      request.log.info({ webhookEndpointId: endpoint.id, connectionId }, 'owner added a webhook endpoint');
      return webhookSecretPage(reply, { url: endpoint.url, secret });
    } catch (thrown: unknown) {
      if (thrown instanceof WebhookTargetError) throw new HttpError(400, asSentence(thrown.message));
      throw thrown;
    }
  });

  app.post<IdParams>('/me/webhooks/:id/delete', async (request, reply) => {
    const connectionId = await ownerActing(request);
    const own = await ownEndpoint(connectionId, request.params.id);
    await deps.webhooks.delete(own.id);
    return seeOther(reply, '/me?notice=webhook-deleted#webhooks');
  });

  app.post<IdParams>('/me/webhooks/:id/test', async (request, reply) => {
    const connectionId = await ownerActing(request);
    const own = await ownEndpoint(connectionId, request.params.id);
    try {
      const delivery = await deps.webhooks.sendTestEvent(own.id, deps.now());
      request.log.info(
        { webhookEndpointId: own.id, webhookDeliveryId: delivery.id, connectionId },
        'owner sent a webhook test event',
      );
    } catch (thrown: unknown) {
      // Deleted since the look above (by the owner in another tab, or an administrator).
      if (thrown instanceof WebhookEndpointNotFoundError)
        throw new HttpError(404, 'No such webhook endpoint on your account.');
      throw thrown;
    }
    return seeOther(reply, testedWebhookLocation(own.id));
  });

  app.post<IdParams>('/me/teams/:id/leave', async (request, reply) => {
    const connectionId = await ownerActing(request);
    if (!(await teams.removeMember(request.params.id, connectionId))) {
      throw new HttpError(404, 'You are not a member of that team.');
    }
    return seeOther(reply, '/me?notice=left');
  });

  app.post('/me/delete', async (request, reply) => {
    const connectionId = await ownerActing(request);
    // One row: the foreign keys remove the rest, and the triggers tell every web process to forget the feeds.
    await deps.connections.delete(connectionId);
    await deps.feedChanges.caughtUp();
    await owners.signOutEverywhere(reply, connectionId);
    request.log.info({ connectionId }, 'owner deleted their connection and its data');
    return seeOther(reply, '/deleted');
  });

  app.get('/deleted', async (_request, reply) => deletedPage(reply));

  app.post('/signout', async (request, reply) => {
    assertSameOrigin(request);
    await owners.signOut(request, reply);
    return seeOther(reply, '/');
  });
}
