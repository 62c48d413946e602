// The admin's teams: the page and its actions (create a team, add or remove a member, create a team feed,
// delete a team). Each action is a POST form answered with 303 back to the page, except a new feed, whose URL
// is shown once. Rotating and revoking a team feed are the feed actions every feed has (admin-routes.ts).
import { shareLinkViews } from '../share-links-section.js';
import type { FastifyInstance } from 'fastify';
import { feedOptionsSchema } from '../../feeds/feed-options.js';
import { newFeedUrlPage } from './admin-pages.js';
import { asHttpError } from './admin-routes.js';
import { ADMIN_TEAMS, adminTeamsPage, TEAM_NOTICES } from './admin-team-pages.js';
import { feedLinksFor, isLoopbackBaseUrl } from '../feed-links.js';
import { field, formActions, seeOther } from '../form-replies.js';
import { HttpError } from '../http-error.js';
import type { WebDeps } from '../web-deps.js';

/** The new team feed form: only what was filled in; the store fills in the defaults. */
function teamFeedOptionsFrom(form: unknown): unknown {
  const mode = field(form, 'mode') || 'all';
  const days = field(form, 'days');
  const minimum = field(form, 'minimum');
  const summary = field(form, 'summary');
  return {
    mode,
    ...(days === '' ? {} : { days: Number(days) }),
    // The form shows the minimum for either mode: it means something only when everyone must be free.
    ...(mode === 'all' && minimum !== '' ? { minimum: Number(minimum) } : {}),
    ...(summary === '' ? {} : { summary }),
  };
}

export function registerAdminTeamRoutes(app: FastifyInstance, deps: WebDeps): void {
  const teams = deps.teams;

  app.get(ADMIN_TEAMS, async (request, reply) => {
    const all = await teams.list();
    const memberIds = [...new Set(all.flatMap((t) => t.members.map((m) => m.connectionId)))];
    const emails = new Map((await deps.connectionAdmin.contacts(memberIds)).map((c) => [c.id, c.email]));
    const notice = TEAM_NOTICES[field(request.query, 'notice')];
    return adminTeamsPage(reply, {
      teams: await Promise.all(
        all.map(async (team) => {
          const feeds = await deps.feeds.list({ teamId: team.id });
          const shares = await shareLinkViews(
            deps.shareLinks,
            deps.settings.publicBaseUrl,
            feeds.filter((feed) => feed.revokedAt === null).map((feed) => feed.id),
          );
          return { team, emails, feeds, shares };
        }),
      ),
      now: deps.now(),
      ...(notice === undefined ? {} : { notice }),
    });
  });

  const action = formActions(app, asHttpError);

  action(ADMIN_TEAMS, async (request, reply) => {
    const team = await teams.create(field(request.body, 'name'));
    request.log.info({ teamId: team.id }, 'admin created a team');
    return seeOther(reply, `${ADMIN_TEAMS}?notice=team-created#team-${team.id}`);
  });

  action(`${ADMIN_TEAMS}/:id/members`, async (request, reply) => {
    const team = await teams.find(request.params.id);
    const ref = field(request.body, 'connection');
    if (ref === '') throw new HttpError(400, 'Name the connection to add by its e-mail address or id.');
    const connection = await deps.connectionAdmin.byIdOrEmail(ref).catch((thrown: unknown) => {
      throw new HttpError(400, thrown instanceof Error ? `${thrown.message}.` : String(thrown));
    });
    await teams.addMembers(team.id, [connection.id]);
    return seeOther(reply, `${ADMIN_TEAMS}?notice=member-added#team-${team.id}`);
  });

  action(`${ADMIN_TEAMS}/:id/members/:connectionId/remove`, async (request, reply) => {
    const team = await teams.find(request.params.id);
    const removed = await teams.removeMember(team.id, request.params.connectionId ?? '');
    return seeOther(
      reply,
      `${ADMIN_TEAMS}?notice=${removed ? 'member-removed' : 'not-a-member'}#team-${team.id}`,
    );
  });

  action(`${ADMIN_TEAMS}/:id/delete`, async (request, reply) => {
    const team = await teams.find(request.params.id);
    await teams.delete(team.id);
    // Its feeds went with it: their URLs must be dead in this process before the page says so.
    await deps.feedChanges.caughtUp();
    request.log.info({ teamId: team.id }, 'admin deleted a team');
    return seeOther(reply, `${ADMIN_TEAMS}?notice=team-deleted`);
  });

  action(`${ADMIN_TEAMS}/:id/feeds`, async (request, reply) => {
    const team = await teams.find(request.params.id);
    const options = feedOptionsSchema.safeParse(teamFeedOptionsFrom(request.body));
    if (!options.success) {
      throw new HttpError(
        400,
        `Invalid feed options: ${options.error.issues.map((i) => i.message).join('; ')}`,
      );
    }
    const label = field(request.body, 'label').slice(0, 100);
    const { feed, token } = await deps.feeds.createTeamFeed({
      teamId: team.id,
      label: label === '' ? null : label,
      options: options.data,
    });
    request.log.info({ feedId: feed.id, teamId: team.id }, 'admin created a team feed');
    return newFeedUrlPage(reply, {
      feed,
      links: feedLinksFor(deps.settings.publicBaseUrl, token, await deps.feedNames.calendarName(feed)),
      rotated: false,
      loopback: isLoopbackBaseUrl(deps.settings.publicBaseUrl),
    });
  });
}
