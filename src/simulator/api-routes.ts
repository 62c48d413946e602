// The resource API (mounted under /api): four GET endpoints behind a bearer JWT.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { calendarOf } from './bookings.js';
import { buildOverview, buildSlotList } from './calendar-payloads.js';
import { parseOverviewQuery, parseSlotsQuery } from './calendar-query.js';
import type { SimContext } from './context.js';
import { hangRequest, replyWithEarlyFault, sendPayload, waitInjectedLatency } from './fault-replies.js';
import { bearerTokenOf, peekClaim } from './tokens.js';
import type { SimEventType, SimUser } from './types.js';

type ApiResult =
  { status: 200; payload: unknown } | { status: 400 | 404; body: { error: string; message: string } };
type Produce = (user: SimUser, request: FastifyRequest) => ApiResult;

const badRequest = (message: string): ApiResult => ({ status: 400, body: { error: 'bad_request', message } });
const notFound: ApiResult = { status: 404, body: { error: 'not_found', message: 'event type not found' } };

function rejectToken(reply: FastifyReply, description: string): FastifyReply {
  // Never echo the token itself: descriptions are fixed strings.
  return reply
    .code(401)
    .header(
      'www-authenticate',
      `Bearer realm="calendbook-api", error="invalid_token", error_description="${description}"`,
    )
    .send({ error: 'invalid_token', error_description: description });
}

async function authenticatedUser(
  ctx: SimContext,
  request: FastifyRequest,
): Promise<{ user: SimUser } | { error: string }> {
  const header = request.headers.authorization;
  const token = bearerTokenOf(header);
  if (token === null) {
    return {
      error: header ? 'The Authorization header is not a Bearer token' : 'The access token is missing',
    };
  }
  const verified = await ctx.tokens.verify(token);
  if (!verified.ok) return { error: verified.reason };
  if (!ctx.grants.isAccessTokenActive(verified.claims.jti)) return { error: 'The access token was revoked' };
  const user = ctx.users.find((u) => u.id === verified.claims.sub);
  return user ? { user } : { error: 'The access token subject is unknown' };
}

async function runApiEndpoint(
  ctx: SimContext,
  request: FastifyRequest,
  reply: FastifyReply,
  endpoint: string,
  produce: Produce,
): Promise<FastifyReply> {
  const token = bearerTokenOf(request.headers.authorization);
  ctx.calls.record(endpoint, peekClaim(token, 'sub'));
  const decision = ctx.faults.decide(endpoint, peekClaim(token, 'client_id'));
  if (!(await waitInjectedLatency(ctx, decision.delayMs))) return hangRequest(reply);
  if (decision.early) {
    ctx.logger.info({ endpoint, fault: decision.early.kind }, 'simulator fault injected');
    return replyWithEarlyFault(reply, decision.early, endpoint);
  }
  const auth = await authenticatedUser(ctx, request);
  if ('error' in auth) return rejectToken(reply, auth.error);
  const result = produce(auth.user, request);
  if (result.status !== 200) return reply.code(result.status).send(result.body);
  return sendPayload(ctx, reply, result.payload, decision, endpoint);
}

function ownEventType(user: SimUser, request: FastifyRequest): SimEventType | undefined {
  const { event_id: eventId } = request.params as { event_id: string };
  // Another user's event type is a 404 too: existence must not leak across accounts.
  return user.eventTypes.find((e) => e.payload.event_id === eventId);
}

export function registerApiRoutes(app: FastifyInstance, ctx: SimContext): void {
  const route = (path: string, endpoint: string, produce: Produce) =>
    app.get(path, (request, reply) => runApiEndpoint(ctx, request, reply, endpoint, produce));

  route('/events', 'GET /events', (user) => ({
    status: 200,
    payload: user.eventTypes.map((e) => e.payload),
  }));

  route('/users/me', 'GET /users/me', (user) => ({ status: 200, payload: user.profile }));

  route('/calendars/:event_id', 'GET /calendars/{event_id}', (user, request) => {
    const query = parseOverviewQuery(request.query as Record<string, unknown>);
    if (!query.ok) return badRequest(query.message);
    const event = ownEventType(user, request);
    if (!event) return notFound;
    return { status: 200, payload: buildOverview(calendarOf(user), event, query.value, ctx.clock.nowMs()) };
  });

  route('/calendars/:event_id/slots', 'GET /calendars/{event_id}/slots', (user, request) => {
    const query = parseSlotsQuery(request.query as Record<string, unknown>);
    if (!query.ok) return badRequest(query.message);
    const event = ownEventType(user, request);
    if (!event) return notFound;
    return { status: 200, payload: buildSlotList(calendarOf(user), event, query.value, ctx.clock.nowMs()) };
  });
}
