// GET/HEAD /feeds/{token}.ics (fastify answers HEAD from the GET route), the same feed's free/busy as
// /freebusy/{token}.ifb, and robots.txt. An unknown, revoked
// or rotated token is a 404 whose body never depends on the token, and the hash lookup runs for every token, well-formed or not, so timing does not tell them apart either.
// What to serve is decided in serving/ (feed-serving.ts); this adds HTTP: validators, compression, statuses.
// A poll of an unchanged feed is answered from memory: the token lookup (serving/feed-lookup.ts) and the
// rendered bytes (serving/render-cache.ts) are both remembered until Postgres says something they depend on
// changed. When Postgres cannot answer, a feed this process served recently gets the bytes it last got,
// validators included (serving/last-good-feeds.ts), any other token a 503; the outage is logged once
// (database-outage.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hashedToken } from '../../serving/feed-lookup.js';
import type { FeedServing } from '../../serving/feed-serving.js';
import type { RenderedFeed } from '../../serving/render-cache.js';
import { databaseUnavailableReason } from '../../store/database-errors.js';
import { feedOwnerId } from '../../store/feeds.js';
import { acceptsGzip } from '../accept-encoding.js';
import { isNotModified } from '../conditional-get.js';
import { createDatabaseOutage } from './database-outage.js';
import { DATABASE_RETRY_AFTER_SECONDS, sendError } from '../error-handler.js';
import { HttpError, NO_SUCH_FEED } from '../http-error.js';
import type { WebDeps } from '../web-deps.js';

const FEED_ROUTE = '/feeds/:token.ics';
/** The 503 body: like NO_SUCH_FEED, it never depends on the token. */
export const FEEDS_UNAVAILABLE = 'Feeds cannot be served right now. Please try again in a few minutes.';
// Google Calendar's fetcher obeys robots.txt: a site that disallows /feeds/ gets no Google subscribers.
const ROBOTS_TXT = 'User-agent: *\nAllow: /feeds/\nDisallow: /\n';

function gzipTag(tag: string): string {
  return `${tag}-gzip`;
}

export function registerFeedRoutes(app: FastifyInstance, deps: WebDeps, serving: FeedServing): void {
  const { lastGood } = serving;
  const graceSeconds = deps.settings.feedOutageGraceSeconds;
  const outage = createDatabaseOutage({
    logger: deps.logger,
    now: deps.now,
    graceSeconds,
    countAnswer: (answer) => deps.metrics.feedOutageAnswers.inc({ answer }),
  });
  // Clients that honour max-age poll at most twice per sync interval; one that revalidates gets a 304.
  const cacheControl = `private, max-age=${Math.max(60, Math.floor(deps.settings.refreshIntervalSeconds / 2))}`;

  function sendFeed(
    request: FastifyRequest,
    reply: FastifyReply,
    rendered: RenderedFeed,
    filename = 'free-time.ics',
  ): FastifyReply {
    const gzip = rendered.gzipped !== undefined && acceptsGzip(request.headers['accept-encoding']);
    // A strong ETag names one representation: the gzip-coded bytes get a tag of their own (RFC 9110 §8.8.3),
    // and either tag revalidates, since both stand for the same content.
    const etag = `"${gzip ? gzipTag(rendered.tag) : rendered.tag}"`;
    reply
      .header('etag', etag)
      .header('last-modified', rendered.lastModifiedHttpDate)
      .header('cache-control', cacheControl)
      .header('x-robots-tag', 'noindex')
      .header('x-content-type-options', 'nosniff');
    if (deps.settings.feedGzip) reply.header('vary', 'Accept-Encoding');
    const notModified = isNotModified(
      {
        ifNoneMatch: request.headers['if-none-match'],
        ifModifiedSince: request.headers['if-modified-since'],
      },
      { opaqueTags: [rendered.tag, gzipTag(rendered.tag)], lastModified: rendered.lastModified },
    );
    if (notModified) return reply.code(304).send();
    reply
      .type('text/calendar; charset=utf-8')
      .header('content-disposition', `inline; filename="${filename}"`);
    if (gzip && rendered.gzipped !== undefined) {
      return reply.header('content-encoding', 'gzip').send(rendered.gzipped);
    }
    return reply.send(rendered.body);
  }

  function answerFromMemory(
    request: FastifyRequest,
    reply: FastifyReply,
    tokenKey: string,
    reason: string,
  ): FastifyReply {
    outage.unreachable(reason);
    const answer = lastGood.duringOutage(tokenKey);
    outage.answered(answer.kind);
    if (answer.kind === 'last_good') return sendFeed(request, reply, answer.rendered);
    if (answer.kind === 'gone') throw new HttpError(404, NO_SUCH_FEED);
    // Sent, not thrown: the error handler logs every request the database failed, and calendar apps poll
    // around the clock; this outage has been logged once already.
    reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
    return sendError(request, reply, 503, FEEDS_UNAVAILABLE);
  }

  app.get('/robots.txt', async (_request, reply) =>
    reply.type('text/plain; charset=utf-8').header('cache-control', 'public, max-age=86400').send(ROBOTS_TXT),
  );

  const countResponse = (_request: unknown, reply: FastifyReply, done: () => void) => {
    deps.metrics.feedRequests.inc({ status: String(reply.statusCode) });
    done();
  };

  // The feed's free/busy: same token, lookup and validators; while Postgres is out of reach it answers 503
  // (calendar apps poll the feed, which keeps its last good bytes; free/busy is looked up now and then).
  app.get<{ Params: { token: string } }>(
    '/freebusy/:token.ifb',
    { onResponse: countResponse },
    async (request, reply) => {
      let rendered: RenderedFeed | undefined;
      try {
        rendered = await serving.freeBusy(hashedToken(request.params.token));
      } catch (thrown: unknown) {
        const reason = databaseUnavailableReason(thrown);
        if (reason === undefined) throw thrown;
        outage.unreachable(reason);
        reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
        return sendError(request, reply, 503, FEEDS_UNAVAILABLE);
      }
      if (rendered === undefined) throw new HttpError(404, NO_SUCH_FEED);
      return sendFeed(request, reply, rendered, 'free-busy.ifb');
    },
  );

  app.get<{ Params: { token: string } }>(
    FEED_ROUTE,
    { onResponse: countResponse },
    async (request, reply) => {
      // Hashed once: the lookup and the last good bytes are both keyed by it.
      const token = hashedToken(request.params.token);
      const tokenKey = token.key;
      const since = lastGood.mark();
      let current: Awaited<ReturnType<FeedServing['current']>>;
      try {
        current = await serving.current(token);
      } catch (thrown: unknown) {
        const reason = databaseUnavailableReason(thrown);
        if (reason === undefined) throw thrown;
        return answerFromMemory(request, reply, tokenKey, reason);
      }
      // Answered from the database, or from memory while the listener hears it: either way Postgres is there.
      outage.reachable();
      if (current === undefined) {
        lastGood.markGone(tokenKey);
        throw new HttpError(404, NO_SUCH_FEED);
      }
      lastGood.keep(since, tokenKey, feedOwnerId(current.resolved.feed), current.rendered);
      return sendFeed(request, reply, current.rendered);
    },
  );
}
