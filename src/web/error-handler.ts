// The one error handler and the not-found handler. A 4xx says what was wrong (the message is written for the
// client); a 5xx says only that it failed on our side, and the error itself goes to the log with the URL
// redacted (a feed token or an authorization code can sit in it). Postgres not answering in time (a statement
// or lock timeout, no free pooled connection, the server gone) is a 503 with Retry-After: the request was
// fine and will work later, which a 500 would not tell a client or a load balancer. So is Redis not
// answering, for the routes that need it (the connect flow, admin sessions and actions): feeds never do.
import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { coerceError } from '../lib/coerce-error.js';
import { redisUnavailableReason } from '../lib/redis-errors.js';
import { databaseUnavailableReason } from '../store/database-errors.js';
import { redactText } from '../log.js';
import { noteForAccessLog } from './access-log.js';
import { errorCodeOf, HttpError, NO_SUCH_FEED } from './http-error.js';
import { html, sendPage } from './html.js';

const TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Sign-in needed',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  413: 'Request too large',
  415: 'Unsupported content type',
  429: 'Too many requests',
  503: 'Try again shortly',
};

/** How long a client is asked to wait after a 503 for a busy or unreachable database. */
export const DATABASE_RETRY_AFTER_SECONDS = 30;
/** The same for Redis: reconnect attempts come every few seconds once it is back. */
export const REDIS_RETRY_AFTER_SECONDS = 30;
export const REDIS_UNAVAILABLE_MESSAGE =
  'This page needs Redis, which is unavailable right now. Feeds keep working; please try again in a minute.';

/** Browsers list text/html in Accept; calendar clients, curl and fetch() get JSON. */
export function prefersHtml(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('text/html');
}

export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  message: string,
  options: { code?: string; title?: string } = {},
): FastifyReply {
  const code = options.code ?? errorCodeOf(status);
  if (request.url.startsWith('/api/')) return sendProblem(request, reply, status, message);
  if (prefersHtml(request)) {
    const title = options.title ?? TITLES[status] ?? (status >= 500 ? 'Something went wrong' : 'Error');
    return sendPage(reply, status, {
      title,
      body: html`<section class="card">
        <h1>${title}</h1>
        <p id="error-message">${message}</p>
        <div class="actions">
          <a class="button" href="/">slotfeed home</a>
          <a class="button" href="/connect">Connect a Calendbook account</a>
        </div>
      </section>`,
    });
  }
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .header('cache-control', 'no-store')
    .send({ error: code, message });
}

/**
 * The JSON API's errors: RFC 9457 problem details. `type` is about:blank (the status says what kind of problem
 * it is), `title` the status's phrase, `detail` what was wrong with this request, `instance` its path.
 */
function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  detail: string,
): FastifyReply {
  return reply
    .code(status)
    .type('application/problem+json; charset=utf-8')
    .header('cache-control', 'no-store')
    .send({
      type: 'about:blank',
      title: STATUS_CODES[status] ?? 'Error',
      status,
      detail,
      instance: redactText(request.url.split('?')[0] ?? request.url),
    });
}

function statusOf(error: unknown): number {
  const status = (error as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' && status >= 400 && status <= 599 ? status : 500;
}

/**
 * fastify's `frameworkErrors`: what its router refuses before any route or hook runs (a bad percent-encoding, a
 * path segment past maxParamLength) would otherwise be answered by fastify itself, as its own JSON, quoting the
 * path (a feed token can sit in it). Answered like every other error instead: problem details under /api/.
 */
export function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const status = statusOf(error);
  const message =
    error.code === 'FST_ERR_BAD_URL'
      ? 'This address is not valid: a % must be followed by two hexadecimal digits that encode UTF-8.'
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? 'A part of this address is longer than any id or token.'
        : 'Something went wrong on our side. It has been logged; please try again later.';
  if (status >= 500) {
    request.log.error(
      { err: coerceError(error), method: request.method, url: redactText(request.url) },
      'request failed',
    );
  }
  void sendError(request, reply, status, message);
}

export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((thrown: FastifyError | HttpError, request, reply) => {
    const status = statusOf(thrown);
    const unavailable = databaseUnavailableReason(thrown);
    if (unavailable !== undefined) {
      // A warning without the stack: during a lock or an outage every request fails the same known way.
      request.log.warn(
        { reason: unavailable, method: request.method, url: redactText(request.url) },
        'database unavailable',
      );
      reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
      return sendError(
        request,
        reply,
        503,
        'The database is busy or unreachable right now; please try again in a minute.',
      );
    }
    const redisUnavailable = redisUnavailableReason(thrown);
    if (redisUnavailable !== undefined) {
      // On the request's own access line, not a line of its own: the outage itself is logged by the clients,
      // once per interval (lib/repeated-errors.ts).
      noteForAccessLog(request, 'warn', { redisUnavailable });
      reply.header('retry-after', String(REDIS_RETRY_AFTER_SECONDS));
      return sendError(request, reply, 503, REDIS_UNAVAILABLE_MESSAGE);
    }
    if (status >= 500) {
      request.log.error(
        { err: coerceError(thrown), method: request.method, url: redactText(request.url) },
        'request failed',
      );
      // Only our own HttpError messages are written to be shown; anything else may quote internals.
      const message =
        thrown instanceof HttpError
          ? thrown.message
          : 'Something went wrong on our side. It has been logged; please try again later.';
      if (thrown instanceof HttpError) reply.headers(thrown.headers);
      return sendError(request, reply, status, message);
    }
    if (thrown instanceof HttpError) {
      reply.headers(thrown.headers);
      return sendError(request, reply, status, thrown.message, {
        code: thrown.code,
        ...(thrown.title === undefined ? {} : { title: thrown.title }),
      });
    }
    // fastify's own 4xx (validation, body too large) have messages fit for the client; its 415 says only
    // "Unsupported Media Type", so that one is spelled out.
    const message =
      status === 415
        ? `Unsupported Content-Type ${JSON.stringify(request.headers['content-type'] ?? '')}: send forms as application/x-www-form-urlencoded.`
        : thrown.message;
    return sendError(request, reply, status, message, { code: errorCodeOf(status) });
  });

  app.setNotFoundHandler((request, reply) =>
    // Any other address under /feeds/ (no .ics, a path too deep) gets the feed route's 404 word for word.
    request.url.startsWith('/feeds/')
      ? sendError(request, reply, 404, NO_SUCH_FEED)
      : sendError(request, reply, 404, `Nothing here: ${request.method} ${redactText(request.url)}.`),
  );
}
