// The admin page and its actions. Every action is a POST form (the guard checks Origin/Referer for cookie
// sessions) answered with 303 back to the page, except create and rotate, whose new URL is shown once.
import { registerCaldavCleanupActions } from '../caldav/caldav-cleanups-section.js';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_FEED_VIEW, feedOptionsSchema } from '../../feeds/feed-options.js';
import { RedisUnavailableError, whileRedisAnswers } from '../../lib/redis-errors.js';
import { ConnectionNotFoundError } from '../../store/connections.js';
import { FeedNotFoundError, InvalidFeedOptionsError, type FeedRecord } from '../../store/feeds.js';
import { TeamNameTakenError, TeamNotFoundError, InvalidTeamNameError } from '../../store/teams.js';
import { noteForAccessLog } from '../access-log.js';
import { ADMIN_DISABLED, type AdminAuth } from './admin-auth.js';
import { CONNECTION_STATUSES, type ConnectionFilter } from '../../store/connection-admin.js';
import {
  ADMIN_CLEANUP_PATHS,
  ADMIN_HOME,
  ADMIN_NOTICES,
  adminPage,
  loginPage,
  newFeedUrlPage,
} from './admin-pages.js';
import { ADMIN_TEAMS } from './admin-team-pages.js';
import { feedLinksFor, isLoopbackBaseUrl } from '../feed-links.js';
import { asSentence, HttpError } from '../http-error.js';
import { perAddressLimit, SIGN_IN_FORM_PER_MINUTE } from '../rate-limits.js';
import type { WebDeps } from '../web-deps.js';
import { field, formActions, seeOther } from '../form-replies.js';

/** The list's filter from the query; an unknown status is ignored (a stale bookmark still shows the list). */
function connectionFilterFrom(query: unknown): ConnectionFilter {
  const text = field(query, 'q').slice(0, 200);
  const status = CONNECTION_STATUSES.find((s) => s === field(query, 'status'));
  return { ...(text === '' ? {} : { text }), ...(status === undefined ? {} : { status }) };
}

/** Only local paths: an absolute or protocol-relative `next` would make the login form an open redirect. */
function safeNext(next: string): string {
  return /^\/(?![/\\])[^\s]*$/.test(next) ? next : ADMIN_HOME;
}

/**
 * Queues a sync at once, or fails at once: the queue is in Redis, and an admin action must not wait for it
 * to come back (90 s and more, before). Deduplicated, so a late enqueue after a timeout is harmless.
 */
function enqueueSyncNow(deps: WebDeps, connectionId: string): Promise<void> {
  return whileRedisAnswers(deps.redis, () => deps.enqueueSync([connectionId]));
}

/** Store errors become client errors: an id from a stale page, a bad form value. */
export function asHttpError(thrown: unknown): unknown {
  if (thrown instanceof ConnectionNotFoundError) return new HttpError(404, 'No such connection.');
  if (thrown instanceof FeedNotFoundError) return new HttpError(404, `No such feed, or it is revoked.`);
  if (thrown instanceof InvalidFeedOptionsError) return new HttpError(400, thrown.message);
  if (thrown instanceof TeamNotFoundError) return new HttpError(404, 'No such team.');
  if (thrown instanceof TeamNameTakenError || thrown instanceof InvalidTeamNameError) {
    return new HttpError(400, asSentence(thrown.message));
  }
  return thrown;
}

function feedOptionsFrom(form: unknown): unknown {
  const days = field(form, 'days');
  const view = field(form, 'view') || DEFAULT_FEED_VIEW;
  const summary = field(form, 'summary').trim();
  // The form shows both views' fields: only the chosen view's are taken.
  return {
    view,
    ...(days === '' ? {} : { days: Number(days) }),
    ...(view === 'slots' && field(form, 'merge') === 'true' ? { merge: true } : {}),
    ...((view === 'free' || view === 'free+busy') && summary !== '' ? { summary } : {}),
  };
}

async function linksFor(deps: WebDeps, feed: FeedRecord, token: string) {
  return feedLinksFor(deps.settings.publicBaseUrl, token, await deps.feedNames.calendarName(feed));
}

// The sign-in form holds a token and a path: a few hundred bytes, where the app's default allows 64 KiB.
const SIGN_IN_BODY_LIMIT = 4096;

/** Sign-in and sign-out: outside the guard (they are how one gets past it). */
export function registerAdminSession(app: FastifyInstance, deps: WebDeps, auth: AdminAuth): void {
  app.get('/admin/login', async (request, reply) => {
    if (!auth.enabled) throw new HttpError(403, ADMIN_DISABLED);
    if ((await auth.credentialOf(request)) !== undefined) return seeOther(reply, ADMIN_HOME);
    return loginPage(reply, 200, { next: safeNext(field(request.query, 'next')) });
  });

  app.post(
    '/admin/login',
    {
      bodyLimit: SIGN_IN_BODY_LIMIT,
      config: { rateLimit: perAddressLimit('admin-sign-in-form', SIGN_IN_FORM_PER_MINUTE) },
    },
    async (request, reply) => {
      if (!auth.enabled) throw new HttpError(403, ADMIN_DISABLED);
      auth.assertSameOrigin(request);
      const next = safeNext(field(request.body, 'next'));
      const outcome = await auth.signIn(request, reply, field(request.body, 'token'));
      if (outcome.kind === 'locked-out') {
        reply.header('retry-after', String(outcome.retryAfterSeconds));
        const minutes = Math.ceil(outcome.retryAfterSeconds / 60);
        return loginPage(reply, 429, {
          error: `Too many wrong tokens from your address: try again in ${minutes} minutes.`,
          next,
        });
      }
      if (outcome.kind === 'wrong-token') {
        // The request's one log line says so (the access log), with the count that leads to a lockout.
        noteForAccessLog(request, 'warn', {
          adminSignIn: 'wrong token',
          failures: outcome.failures,
          lockedForSeconds: outcome.lockedForSeconds,
        });
        return loginPage(reply, 401, { error: 'That is not the admin token.', next });
      }
      return seeOther(reply, next);
    },
  );

  app.post('/admin/logout', async (request, reply) => {
    auth.assertSameOrigin(request);
    await auth.endSession(request, reply);
    return seeOther(reply, '/admin/login');
  });
}

/** The guarded routes; registered inside the scope whose onRequest hook is auth.requireAdmin. */
export function registerAdminRoutes(app: FastifyInstance, deps: WebDeps): void {
  app.get(ADMIN_HOME, async (request, reply) => {
    const filter = connectionFilterFrom(request.query);
    const overview = await deps.connectionAdmin.overviews(filter);
    const notice = ADMIN_NOTICES[field(request.query, 'notice')];
    return adminPage(reply, {
      ...overview,
      filter,
      now: deps.now(),
      cleanups: await deps.caldavDestinations.cleanups(),
      ...(notice === undefined ? {} : { notice }),
    });
  });

  const action = formActions(app, asHttpError);

  // The guard has checked the credential and the form's origin: the administrator acts on any cleanup.
  registerCaldavCleanupActions(app, deps.caldavDestinations, {
    actor: 'admin',
    path: ADMIN_CLEANUP_PATHS.path,
    mayManage: async () => true,
    page: () => ADMIN_HOME,
  });

  action('/admin/connections/:id/sync', async (request, reply) => {
    const connection = await deps.connectionAdmin.require(request.params.id);
    await enqueueSyncNow(deps, connection.id);
    return seeOther(reply, `${ADMIN_HOME}?notice=sync-queued`);
  });

  action('/admin/connections/:id/disable', async (request, reply) => {
    const connection = await deps.connectionAdmin.require(request.params.id);
    const changed = await deps.connectionAdmin.setEnabled(connection.id, false, deps.now());
    return seeOther(reply, `${ADMIN_HOME}?notice=${changed ? 'disabled' : 'already-disabled'}`);
  });

  action('/admin/connections/:id/enable', async (request, reply) => {
    const connection = await deps.connectionAdmin.require(request.params.id);
    const changed = await deps.connectionAdmin.setEnabled(connection.id, true, deps.now());
    if (!changed) return seeOther(reply, `${ADMIN_HOME}?notice=already-enabled`);
    try {
      await enqueueSyncNow(deps, connection.id);
    } catch (thrown: unknown) {
      // Enabled all the same (that is in Postgres, due now): the scheduler queues it when Redis is back.
      if (!(thrown instanceof RedisUnavailableError)) throw thrown;
      noteForAccessLog(request, 'warn', { redisUnavailable: thrown.reason });
      return seeOther(reply, `${ADMIN_HOME}?notice=enabled-sync-later`);
    }
    return seeOther(reply, `${ADMIN_HOME}?notice=enabled`);
  });

  action('/admin/connections/:id/feeds', async (request, reply) => {
    const connection = await deps.connectionAdmin.require(request.params.id);
    const upstreamEventId = field(request.body, 'upstreamEventId');
    if (
      upstreamEventId !== '' &&
      !(await deps.connectionAdmin.currentEventTitle(connection.id, upstreamEventId))
    ) {
      throw new HttpError(400, 'This connection has no such event type.');
    }
    const options = feedOptionsSchema.safeParse(feedOptionsFrom(request.body));
    if (!options.success) {
      throw new HttpError(
        400,
        `Invalid feed options: ${options.error.issues.map((i) => i.message).join('; ')}`,
      );
    }
    const label = field(request.body, 'label').slice(0, 100);
    const { feed, token } = await deps.feeds.create({
      connectionId: connection.id,
      upstreamEventId: upstreamEventId === '' ? null : upstreamEventId,
      label: label === '' ? null : label,
      options: options.data,
    });
    request.log.info({ feedId: feed.id, connectionId: connection.id }, 'admin created a feed');
    return newFeedUrlPage(reply, {
      feed,
      links: await linksFor(deps, feed, token),
      rotated: false,
      loopback: isLoopbackBaseUrl(deps.settings.publicBaseUrl),
    });
  });

  action('/admin/feeds/:id/rotate', async (request, reply) => {
    const { feed, token } = await deps.feeds.rotate(request.params.id);
    // The old URL must be dead in this process before the page says so (other replicas hear it within ms).
    await deps.feedChanges.caughtUp();
    request.log.info({ feedId: feed.id }, 'admin rotated a feed token');
    return newFeedUrlPage(reply, {
      feed,
      links: await linksFor(deps, feed, token),
      rotated: true,
      loopback: isLoopbackBaseUrl(deps.settings.publicBaseUrl),
    });
  });

  action('/admin/feeds/:id/revoke', async (request, reply) => {
    const feed = await deps.feeds.get(request.params.id);
    await deps.feeds.revoke(feed.id, deps.now());
    await deps.feedChanges.caughtUp();
    request.log.info({ feedId: feed.id }, 'admin revoked a feed');
    // Back to the page the feed is listed on.
    return seeOther(reply, `${feed.teamId === null ? ADMIN_HOME : ADMIN_TEAMS}?notice=revoked`);
  });
}
