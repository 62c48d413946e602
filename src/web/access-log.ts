// One line per request, written when the response is sent: method, redacted URL, status, time, and whatever
// the handler noted about the outcome (a wrong admin token, how many so far). Noting instead of logging
// from the handler keeps it to one line per request, however a request ends: a guessing flood makes as many
// lines as guesses, not twice as many.
// Probes and scrapes arrive every few seconds, and calendar apps poll feeds around the clock: at info level
// they would drown the log (and a line per poll costs as much as answering it from memory). Their counts are
// in /metrics (slotfeed_feed_requests_total by status); failures are logged by the error handler. Requests
// refused by a rate limit are at debug too: that an address went over a limit is logged once per window.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { redactText, type Logger } from '../log.js';

type Level = 'debug' | 'info' | 'warn';

const QUIET_ROUTES = new Set(['/healthz', '/readyz', '/metrics', '/feeds/:token.ics']);
const RANK: Record<Level, number> = { debug: 0, info: 1, warn: 2 };

const notes = new WeakMap<FastifyRequest, { level: Level; fields: Record<string, unknown> }>();

/** Adds fields to the request's access line and raises its level to at least `level`. */
export function noteForAccessLog(
  request: FastifyRequest,
  level: Level,
  fields: Record<string, unknown>,
): void {
  const previous = notes.get(request);
  notes.set(request, {
    level: previous && RANK[previous.level] > RANK[level] ? previous.level : level,
    fields: { ...previous?.fields, ...fields },
  });
}

export function installAccessLog(app: FastifyInstance, logger: Logger): void {
  app.addHook('onResponse', (request, reply, done) => {
    const note = notes.get(request);
    const route = request.routeOptions.url ?? '';
    const routine =
      QUIET_ROUTES.has(route) || route.startsWith('/readyz/') || reply.statusCode === 429 ? 'debug' : 'info';
    const level = note && RANK[note.level] > RANK[routine] ? note.level : routine;
    if (logger.isLevelEnabled(level)) {
      const line = {
        method: request.method,
        url: redactText(request.url),
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
        ...note?.fields,
      };
      request.log[level](line, 'request');
    }
    done();
  });
}
