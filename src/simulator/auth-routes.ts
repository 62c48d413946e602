// The authorization server (mounted under /auth): login/consent, approval, and the token endpoint.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ConsentFields } from './consent-page.js';
import { consentPageHtml, errorPageHtml } from './consent-page.js';
import type { SimContext } from './context.js';
import { hangRequest, replyWithEarlyFault, sendPayload, waitInjectedLatency } from './fault-replies.js';
import type { FormBody } from './token-endpoint.js';
import { answerTokenRequest, clientCredentialsOf } from './token-endpoint.js';
import type { SimUser } from './types.js';

const DEFAULT_SCOPE = 'calendars:read profile:read';
const CHALLENGE_PATTERN = /^[A-Za-z0-9\-._~]{43,128}$/;
const TOKEN_ENDPOINT = 'POST /oauth2/token';

type Params = Record<string, unknown>;
type Validated =
  | { kind: 'fatal'; description: string }
  | { kind: 'redirect_error'; redirectUri: string; error: string; description: string; state?: string }
  | { kind: 'ok'; fields: ConsentFields };

const str = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** RFC 6749 §4.1.2.1: client and redirect URI problems must NOT redirect; everything else goes back to the client. */
function validateAuthorizationRequest(ctx: SimContext, params: Params): Validated {
  const clientId = str(params.client_id);
  if (!clientId || clientId !== ctx.client.id) return { kind: 'fatal', description: 'Unknown client_id' };
  const redirectUri = str(params.redirect_uri);
  if (!redirectUri || !ctx.client.redirectUris.includes(redirectUri)) {
    return { kind: 'fatal', description: 'redirect_uri is not registered for this client' };
  }
  const state = str(params.state);
  const fail = (error: string, description: string): Validated => ({
    kind: 'redirect_error',
    redirectUri,
    error,
    description,
    ...(state !== undefined ? { state } : {}),
  });
  const responseType = str(params.response_type);
  if (!responseType) return fail('invalid_request', 'response_type is required');
  if (responseType !== 'code')
    return fail('unsupported_response_type', 'Only response_type=code is supported');
  const challenge = str(params.code_challenge);
  const method = str(params.code_challenge_method);
  if (challenge !== undefined) {
    // Without a method RFC 7636 means "plain", which this server (like the service) does not accept.
    if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256');
    if (!CHALLENGE_PATTERN.test(challenge)) return fail('invalid_request', 'code_challenge is malformed');
  } else if (method !== undefined) {
    return fail('invalid_request', 'code_challenge_method without code_challenge');
  }
  const fields: ConsentFields = {
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: responseType,
    scope: str(params.scope) || DEFAULT_SCOPE,
  };
  if (state !== undefined) fields.state = state;
  if (challenge !== undefined && method !== undefined) {
    fields.code_challenge = challenge;
    fields.code_challenge_method = method;
  }
  return { kind: 'ok', fields };
}

function redirectWith(reply: FastifyReply, redirectUri: string, params: Record<string, string | undefined>) {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params))
    if (value !== undefined) url.searchParams.set(name, value);
  return reply.header('cache-control', 'no-store').redirect(url.toString(), 302);
}

function replyNotRedirectable(request: FastifyRequest, reply: FastifyReply, description: string) {
  reply.code(400).header('cache-control', 'no-store');
  if ((request.headers.accept ?? '').includes('text/html')) {
    return reply.type('text/html; charset=utf-8').send(errorPageHtml(description));
  }
  return reply.send({ error: 'invalid_request', error_description: description });
}

function approve(ctx: SimContext, reply: FastifyReply, fields: ConsentFields, user: SimUser) {
  const code = ctx.grants.issueCode({
    clientId: fields.client_id,
    redirectUri: fields.redirect_uri,
    userId: user.id,
    scope: fields.scope,
    codeChallenge: fields.code_challenge ?? null,
  });
  ctx.logger.info({ userId: user.id }, 'simulated user approved access');
  return redirectWith(reply, fields.redirect_uri, { code, state: fields.state });
}

/** The validated request, or null when an error answer was already sent. */
function acceptedAuthorization(
  ctx: SimContext,
  request: FastifyRequest,
  reply: FastifyReply,
  params: Params,
): ConsentFields | null {
  const validated = validateAuthorizationRequest(ctx, params);
  if (validated.kind === 'ok') return validated.fields;
  if (validated.kind === 'fatal') replyNotRedirectable(request, reply, validated.description);
  else {
    const { redirectUri, error, description, state } = validated;
    redirectWith(reply, redirectUri, { error, error_description: description, state });
  }
  return null;
}

export function registerAuthRoutes(app: FastifyInstance, ctx: SimContext): void {
  // Any other body type reaches the token endpoint as a string, so it gets an RFC 6749 invalid_request instead
  // of fastify's generic 415.
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  app.get('/login', (request, reply) => {
    ctx.calls.record('GET /login', null);
    const params = request.query as Params;
    const fields = acceptedAuthorization(ctx, request, reply, params);
    if (fields === null) return reply;
    const hint = str(params.login_hint)?.toLowerCase();
    const hinted = hint ? ctx.users.find((u) => u.profile.email.toLowerCase() === hint) : undefined;
    if (hinted) return approve(ctx, reply, fields, hinted);
    const page = consentPageHtml(fields, ctx.users, '/auth/login/approve', ctx.signInNote);
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(page);
  });

  app.post('/login/approve', (request, reply) => {
    ctx.calls.record('POST /login/approve', null);
    const form = (request.body ?? {}) as Params;
    const fields = acceptedAuthorization(ctx, request, reply, form);
    if (fields === null) return reply;
    if (form.decision === 'deny') {
      return redirectWith(reply, fields.redirect_uri, {
        error: 'access_denied',
        error_description: 'The user denied access',
        state: fields.state,
      });
    }
    const user = ctx.users.find((u) => u.id === form.user_id);
    if (!user) return replyNotRedirectable(request, reply, 'Unknown user');
    return approve(ctx, reply, fields, user);
  });

  app.post('/oauth2/token', async (request, reply) => {
    const form = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as FormBody;
    const code = typeof form.code === 'string' ? form.code : undefined;
    const refresh = typeof form.refresh_token === 'string' ? form.refresh_token : undefined;
    const userId = code
      ? ctx.grants.userOfCredential('code', code)
      : refresh
        ? ctx.grants.userOfCredential('refresh_token', refresh)
        : null;
    ctx.calls.record(TOKEN_ENDPOINT, userId);
    const credentials = clientCredentialsOf(request.headers.authorization, form);
    const decision = ctx.faults.decide(
      TOKEN_ENDPOINT,
      credentials === 'both' ? null : (credentials.id ?? null),
    );
    if (!(await waitInjectedLatency(ctx, decision.delayMs))) return hangRequest(reply);
    if (decision.early) return replyWithEarlyFault(reply, decision.early, TOKEN_ENDPOINT);
    const answer = await answerTokenRequest(ctx, {
      contentType: request.headers['content-type'],
      authorization: request.headers.authorization,
      form,
    });
    reply.code(answer.status).headers(answer.headers);
    // Errors are never truncated: a lost error body teaches nothing a lost token body does not.
    return answer.status === 200
      ? sendPayload(ctx, reply, answer.body, decision, TOKEN_ENDPOINT)
      : reply.send(answer.body);
  });
}
