// The actions on CalDAV destinations, for the owner's page and the admin's alike: add one to a feed, push or
// reconcile now, pause, resume, replace credentials, remove. Each is a POST form answered with 303 back to the
// page that lists the feed's destinations and a notice; a failure the person can act on (credentials refused,
// server not reachable, address refused …) shows that page again with the form as it was typed (never the
// password) and the reason as a sentence. Who may act on which feed is the scope's to say: a destination of a
// feed the one acting may not manage is a 404, as an unknown one is. The password is read from the form and
// handed to the service only: it is in no log line, no redirect and no page.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CalDavError } from '../../caldav/index.js';
import {
  DestinationNotPushableError,
  type CaldavDestinations,
} from '../../destinations/caldav-destinations-service.js';
import {
  CaldavDestinationNotFoundError,
  type CaldavDestinationRecord,
} from '../../store/caldav-destinations.js';
import { FeedNotFoundError, type FeedRecord } from '../../store/feeds.js';
import { caldavFailureOf } from './caldav-failure.js';
import { caldavAnchor, type CaldavFormState, type CaldavPaths } from './caldav-destinations-section.js';
import { field, seeOther } from '../form-replies.js';
import { asSentence, HttpError } from '../http-error.js';

export const NO_SUCH_DESTINATION = 'No such calendar destination, or it is not yours.';

export interface CaldavActionScope {
  /** Who acts, for the log line: "owner" or "admin". */
  actor: string;
  paths: CaldavPaths;
  /**
   * Checks who acts (signed in, the form from our own origin) before anything is looked up, and answers which
   * feeds they may manage: `feedFor` gives the feed, or throws a 404 HttpError for one they may not (or an
   * unknown one). `forAdding`: a new destination is for an active feed only.
   */
  acting(request: FastifyRequest): Promise<{
    feedFor(feedId: string, forAdding: boolean): Promise<FeedRecord>;
  }>;
  /** The page that lists this feed's destinations (its path, no query). */
  pageOf(feed: FeedRecord): string;
  /** That page again, answering `status`, with the failed form shown as it was typed. */
  showAgain(
    request: FastifyRequest,
    reply: FastifyReply,
    feed: FeedRecord,
    status: number,
    form: CaldavFormState,
  ): Promise<FastifyReply>;
}

type IdParams = { Params: { id: string } };

/** The password as typed: only surrounding white space (a paste's stray newline) is dropped. */
const passwordOf = (form: unknown) => field(form, 'password');

export function registerCaldavActions(
  app: FastifyInstance,
  service: CaldavDestinations,
  scope: CaldavActionScope,
): void {
  const back = (feed: FeedRecord, notice: string) =>
    `${scope.pageOf(feed)}?notice=${notice}#${caldavAnchor(feed.id)}`;

  /** The destination and its feed, when the one acting may manage it; else 404, as for an unknown one. */
  async function ownDestination(
    request: FastifyRequest,
    destinationId: string,
  ): Promise<{ destination: CaldavDestinationRecord; feed: FeedRecord }> {
    const actor = await scope.acting(request);
    try {
      const destination = await service.get(destinationId);
      return { destination, feed: await actor.feedFor(destination.feedId, false) };
    } catch (thrown: unknown) {
      const notFound =
        thrown instanceof CaldavDestinationNotFoundError ||
        (thrown instanceof HttpError && thrown.statusCode === 404);
      if (notFound) throw new HttpError(404, NO_SUCH_DESTINATION);
      throw thrown;
    }
  }

  /** A destination removed or refused meanwhile (another tab, the CLI) is said plainly. */
  function asHttpError(thrown: unknown): unknown {
    if (thrown instanceof CaldavDestinationNotFoundError) return new HttpError(404, NO_SUCH_DESTINATION);
    if (thrown instanceof DestinationNotPushableError) return new HttpError(409, asSentence(thrown.message));
    return thrown;
  }

  app.post<IdParams>(scope.paths.add(':id'), async (request, reply) => {
    const feed = await (await scope.acting(request)).feedFor(request.params.id, true);
    const typed = {
      serverUrl: field(request.body, 'serverUrl'),
      username: field(request.body, 'username'),
      calendarName: field(request.body, 'calendarName'),
    };
    try {
      const added = await service.add({ feedId: feed.id, ...typed, password: passwordOf(request.body) });
      request.log.info(
        { caldavDestinationId: added.id, feedId: feed.id },
        `${scope.actor} added a CalDAV destination`,
      );
      // A cleanup still under way in that calendar holds the new destination back (caldav-destinations-service.ts).
      const waits = (await service.cleanupAt(added.calendarUrl)) !== null;
      return seeOther(reply, back(feed, waits ? 'caldav-added-waiting' : 'caldav-added'));
    } catch (thrown: unknown) {
      if (thrown instanceof FeedNotFoundError) throw new HttpError(404, 'No such feed, or it is revoked.');
      const failure = caldavFailureOf(thrown);
      if (failure === undefined) throw thrown;
      request.log.info(
        { feedId: feed.id, caldavFailure: thrown instanceof CalDavError ? thrown.code : 'invalid' },
        `${scope.actor} could not add a CalDAV destination`,
      );
      return scope.showAgain(request, reply, feed, failure.status, {
        kind: 'add',
        feedId: feed.id,
        ...typed,
        error: failure.sentence,
      });
    }
  });

  const destinationAction = (
    action: string,
    run: (
      request: FastifyRequest<IdParams>,
      reply: FastifyReply,
      own: { destination: CaldavDestinationRecord; feed: FeedRecord },
    ) => Promise<FastifyReply>,
  ) => {
    app.post<IdParams>(`${scope.paths.destination(':id')}/${action}`, async (request, reply) => {
      const own = await ownDestination(request, request.params.id);
      try {
        return await run(request, reply, own);
      } catch (thrown: unknown) {
        throw asHttpError(thrown);
      }
    });
  };

  destinationAction('push', async (_request, reply, { destination, feed }) => {
    await service.pushNow(destination.id);
    return seeOther(reply, back(feed, 'caldav-pushed'));
  });

  destinationAction('reconcile', async (_request, reply, { destination, feed }) => {
    await service.reconcileNow(destination.id);
    return seeOther(reply, back(feed, 'caldav-reconciled'));
  });

  destinationAction('pause', async (_request, reply, { destination, feed }) => {
    await service.setPaused(destination.id, true);
    return seeOther(reply, back(feed, 'caldav-paused'));
  });

  destinationAction('resume', async (_request, reply, { destination, feed }) => {
    await service.setPaused(destination.id, false);
    return seeOther(reply, back(feed, 'caldav-resumed'));
  });

  destinationAction('credentials', async (request, reply, { destination, feed }) => {
    const username = field(request.body, 'username');
    try {
      await service.replaceCredentials(destination.id, { username, password: passwordOf(request.body) });
    } catch (thrown: unknown) {
      const failure = caldavFailureOf(thrown);
      if (failure === undefined) throw thrown;
      return scope.showAgain(request, reply, feed, failure.status, {
        kind: 'credentials',
        destinationId: destination.id,
        username,
        error: failure.sentence,
      });
    }
    request.log.info(
      { caldavDestinationId: destination.id, feedId: feed.id },
      `${scope.actor} replaced a CalDAV destination's credentials`,
    );
    return seeOther(reply, back(feed, 'caldav-credentials'));
  });

  destinationAction('remove', async (request, reply, { destination, feed }) => {
    // An unchecked checkbox sends nothing: only a form that says so deletes the events. The removal itself
    // cannot fail at the server: a worker deletes the events afterwards (caldav-cleanups-section.ts shows it).
    const keepEvents = field(request.body, 'deleteEvents') !== 'true';
    await service.remove(destination.id, { keepEvents });
    request.log.info(
      { caldavDestinationId: destination.id, feedId: feed.id, keepEvents },
      `${scope.actor} removed a CalDAV destination`,
    );
    return seeOther(reply, back(feed, keepEvents ? 'caldav-removed-kept' : 'caldav-removed'));
  });
}
