// The JSON API, /api/v1: a connection's availability and event types, a team's availability. Route schemas
// (api-schemas.ts) are the single source of the validation, of the answers' shape and of the OpenAPI document.
// Answers carry a strong ETag (a hash of the bytes) and Last-Modified, and a matching If-None-Match gets 304,
// as feeds do. Errors are RFC 9457 problem details (error-handler.ts answers any /api/ error that way).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { ConnectionNotFoundError } from '../../store/connections.js';
import { TeamNotFoundError } from '../../store/teams.js';
import { HttpError } from '../http-error.js';
import { perAddressLimit } from '../rate-limits.js';
import type { WebDeps } from '../web-deps.js';
import { credentialKeyOf, type ApiAccessResolver } from './api-access.js';
import { keptFor, latest, sendData } from './api-answers.js';
import { connectionAvailability, rangeOf, teamAvailability } from './api-availability.js';
import { NOT_IN_SCOPE, scopeOf } from './api-scope.js';
import { registerApiShareLinkRoutes } from './api-share-links.js';
import {
  availabilityQuery,
  availabilityResponse,
  connectionParams,
  eventTypesResponse,
  NOT_MODIFIED,
  PROBLEMS,
  teamAvailabilityQuery,
  teamAvailabilityResponse,
  teamParams,
} from './api-schemas.js';

export const API_PREFIX = '/api/v1';
const SECURITY = [{ bearer: [] }];

export function registerApiRoutes(app: FastifyInstance, deps: WebDeps, access: ApiAccessResolver): void {
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  const api = app.withTypeProvider<ZodTypeProvider>();
  const cacheControl = keptFor(Math.max(60, Math.floor(deps.settings.refreshIntervalSeconds / 2)));
  const limit = perAddressLimit('api', deps.settings.rateLimits.apiPerMinute, { keyed: true });
  const rateLimit =
    limit === false
      ? {}
      : {
          config: {
            rateLimit: {
              ...limit,
              // Per credential (a program behind a shared address has its own allowance), else per address.
              keyGenerator: (request: FastifyRequest) => `api:${credentialKeyOf(request) ?? request.ip}`,
              errorResponseBuilder: (_request: FastifyRequest, context: { ttl: number }) => {
                const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
                return new HttpError(
                  429,
                  `More than ${deps.settings.rateLimits.apiPerMinute} requests a minute with this credential: try again in ${seconds} s.`,
                  { headers: { 'retry-after': String(seconds) } },
                );
              },
            },
          },
        };

  api.get(
    `${API_PREFIX}/connections/:connectionId/availability`,
    {
      ...rateLimit,
      schema: {
        summary: 'A connection’s availability: free blocks, bookable slots and busy time',
        tags: ['availability'],
        security: SECURITY,
        params: connectionParams,
        querystring: availabilityQuery,
        response: { 200: availabilityResponse, 304: NOT_MODIFIED, ...PROBLEMS },
      },
    },
    async (request, reply) => {
      const scope = scopeOf(await access.of(request), deps.settings);
      const { connectionId } = request.params;
      if (!scope.connectionIds.has(connectionId)) throw new HttpError(404, NOT_IN_SCOPE);
      const now = deps.now();
      const { body, changedAt, range } = await connectionAvailability(deps.feedContent, {
        connectionId,
        scope,
        eventType: request.query.eventType,
        range: (accountZone) => rangeOf(request.query, request.query.zone ?? accountZone ?? 'UTC', now),
        now,
      }).catch((thrown: unknown) => {
        if (thrown instanceof ConnectionNotFoundError) throw new HttpError(404, NOT_IN_SCOPE);
        throw thrown;
      });
      return sendData(
        request,
        reply,
        availabilityResponse,
        body,
        latest(changedAt, range.todayStart, scope.changedAt),
        cacheControl,
      );
    },
  );

  api.get(
    `${API_PREFIX}/connections/:connectionId/event-types`,
    {
      ...rateLimit,
      schema: {
        summary: 'A connection’s current event types',
        tags: ['availability'],
        security: SECURITY,
        params: connectionParams,
        response: { 200: eventTypesResponse, 304: NOT_MODIFIED, ...PROBLEMS },
      },
    },
    async (request, reply) => {
      const scope = scopeOf(await access.of(request), deps.settings);
      const { connectionId } = request.params;
      if (!scope.connectionIds.has(connectionId)) throw new HttpError(404, NOT_IN_SCOPE);
      const connection = await deps.feedContent.changeTimes(connectionId);
      if (!connection) throw new HttpError(404, NOT_IN_SCOPE);
      const current = await deps.feedContent.currentEventTypes(connectionId);
      const seen = scope.seenEventTypes(current);
      const eventTypes = current.filter((e) => seen.has(e.id));
      return sendData(
        request,
        reply,
        eventTypesResponse,
        {
          connectionId,
          eventTypes: eventTypes.map(({ id, title, enabled, secret }) => ({ id, title, enabled, secret })),
        },
        latest(connection.feedChangedAt ?? connection.createdAt, scope.changedAt),
        cacheControl,
      );
    },
  );

  registerApiShareLinkRoutes(app, deps, access, rateLimit, API_PREFIX);

  api.get(
    `${API_PREFIX}/teams/:teamId/availability`,
    {
      ...rateLimit,
      schema: {
        summary: 'A team’s availability: when everyone is free, or who is',
        tags: ['availability'],
        security: SECURITY,
        params: teamParams,
        querystring: teamAvailabilityQuery,
        response: { 200: teamAvailabilityResponse, 304: NOT_MODIFIED, ...PROBLEMS },
      },
    },
    async (request, reply) => {
      const scope = scopeOf(await access.of(request), deps.settings);
      const { teamId } = request.params;
      if (!scope.teamIds.has(teamId)) throw new HttpError(404, NOT_IN_SCOPE);
      const view = scope.teamViewFor(request.query);
      const now = deps.now();
      const range = rangeOf(request.query, request.query.zone ?? 'UTC', now);
      const { body, changedAt } = await teamAvailability(deps.feedContent, {
        teamId,
        view,
        days: scope.days,
        range,
        now,
      }).catch((thrown: unknown) => {
        if (thrown instanceof TeamNotFoundError) throw new HttpError(404, NOT_IN_SCOPE);
        throw thrown;
      });
      return sendData(
        request,
        reply,
        teamAvailabilityResponse,
        body,
        latest(changedAt, range.todayStart, scope.changedAt),
        cacheControl,
      );
    },
  );
}
