// The connect and sign-in flows: GET /connect and GET /signin start an OAuth authorization code flow (state +
// PKCE), GET /oauth/callback finishes it: verify and spend the state, exchange the code and identify the
// account. To connect, it creates or updates the connection, makes sure it has a feed and enqueues its first
// sync; to sign in, it only finds the connection. Either way the owner gets a session and a 303 to their page
// (/me), so a reload or the back button shows the page again instead of replaying a spent callback. Every
// refusal is a 400 page that says what happened, and nothing is written before the code exchange succeeded. Both routes are limited per client
// address (rate-limits.ts), and so are the unfinished sign-ins one address may hold (oauth-state.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { coerceError } from '../../lib/coerce-error.js';
import { RedisUnavailableError, whileRedisAnswers } from '../../lib/redis-errors.js';
import { UpstreamAuthError, UpstreamError, type TokenSet } from '../../upstream/index.js';
import { HttpError } from '../http-error.js';
import { createOAuthStateStore } from './oauth-state.js';
import { clientAddressOf, perAddressLimit } from '../rate-limits.js';
import type { OwnerAuth } from './owner-auth.js';
import { notConnectedPage } from './owner-pages.js';
import type { WebDeps } from '../web-deps.js';
import { seeOther } from '../form-replies.js';

interface CallbackQuery {
  code?: unknown;
  state?: unknown;
  error?: unknown;
  error_description?: unknown;
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

function startAgain(title: string, message: string): HttpError {
  return new HttpError(400, `${message} Nothing was connected; start again at /connect.`, { title });
}

/** Who granted access: the token's `sub`, else the profile's e-mail. The profile also names the account. */
async function identifyAccount(
  ctx: WebDeps,
  tokens: TokenSet,
  request: FastifyRequest,
): Promise<{
  upstreamUserId: string;
  email: string | null;
  displayName: string | null;
  timezone: string | null;
}> {
  try {
    const profile = await ctx.api.getProfile(tokens.accessToken);
    return {
      upstreamUserId: tokens.subject ?? profile.email,
      email: profile.email,
      displayName: profile.name,
      timezone: profile.timezone,
    };
  } catch (thrown: unknown) {
    // With a `sub` the account is known; the first sync fills in the profile.
    if (tokens.subject === undefined) throw thrown;
    request.log.warn({ err: coerceError(thrown) }, 'profile not read at connect; the first sync will');
    return { upstreamUserId: tokens.subject, email: null, displayName: null, timezone: null };
  }
}

function upstreamFailure(thrown: unknown): HttpError {
  if (thrown instanceof UpstreamAuthError && thrown.reason === 'invalid_grant') {
    return startAgain(
      'Sign-in expired',
      'Calendbook refused the authorization code: it has expired or was already used.',
    );
  }
  if (thrown instanceof UpstreamAuthError) {
    return new HttpError(502, 'Calendbook refused this application’s credentials. Please tell the operator.');
  }
  return new HttpError(
    502,
    'Calendbook did not answer properly, so the account was not connected. Please try again.',
  );
}

export function registerConnectRoutes(app: FastifyInstance, ctx: WebDeps, owners: OwnerAuth): void {
  const states = createOAuthStateStore(ctx.redis, ctx.settings.redisPrefix);
  const perMinute = ctx.settings.rateLimits.connectPerMinute;

  const startFlow = (intent: 'connect' | 'sign-in') =>
    async function startAuthorization(request: FastifyRequest, reply: FastifyReply) {
      const hint = text((request.query as { login_hint?: unknown }).login_hint);
      if (hint !== undefined && hint.length > 254) throw new HttpError(400, 'login_hint is too long.');
      const authorization = ctx.oauth.buildAuthorizationRequest({
        usePkce: true,
        ...(hint === undefined ? {} : { loginHint: hint }),
      });
      const saved = await states.save(authorization.state, {
        ...(authorization.codeVerifier === undefined ? {} : { codeVerifier: authorization.codeVerifier }),
        startedAt: ctx.now().toISOString(),
        client: clientAddressOf(request),
        intent,
      });
      if (!saved.saved) {
        throw new HttpError(
          429,
          `Too many sign-ins are unfinished from your address: finish one, or start again in ${Math.ceil(saved.retryAfterSeconds / 60)} minutes.`,
          { headers: { 'retry-after': String(saved.retryAfterSeconds) } },
        );
      }
      return reply.header('cache-control', 'no-store').redirect(authorization.url, 302);
    };
  // Each route has its own per-address limit (rate-limits.ts); both hold OAuth states, bounded per address too.
  const startLimit = { config: { rateLimit: perAddressLimit('connect', perMinute) } };
  app.get('/connect', startLimit, startFlow('connect'));
  app.get('/signin', startLimit, startFlow('sign-in'));

  const callbackLimit = perAddressLimit('oauth-callback', perMinute);
  app.get('/oauth/callback', { config: { rateLimit: callbackLimit } }, async (request, reply) => {
    const query = request.query as CallbackQuery;
    const state = text(query.state);
    // Spend the state first, whatever else the callback says: an error answer ends the attempt too.
    const pending = state === undefined ? undefined : await states.take(state);
    const error = text(query.error);
    if (error !== undefined) {
      if (error === 'access_denied') {
        throw startAgain('Access not granted', 'Access to the Calendbook account was declined.');
      }
      const description = text(query.error_description);
      throw startAgain(
        'Calendbook refused',
        `Calendbook answered “${error}”${description ? `: ${description.slice(0, 200)}` : ''}.`,
      );
    }
    if (state === undefined) {
      throw startAgain('Sign-in not recognised', 'The answer from Calendbook carries no state.');
    }
    if (pending === undefined && (await owners.connectionOf(request)) !== undefined) {
      // A reload or the back button replaying a callback this browser already completed: its page is /me.
      return seeOther(reply, '/me');
    }
    if (pending === undefined) {
      throw startAgain(
        'Sign-in not recognised',
        'This sign-in is unknown, has expired (after 10 minutes) or was already completed.',
      );
    }
    const code = text(query.code);
    if (code === undefined) {
      throw startAgain('Sign-in incomplete', 'The answer from Calendbook carries no authorization code.');
    }

    let connection: { id: string };
    try {
      const tokens = await ctx.oauth.exchangeCode(code, pending.codeVerifier);
      const account = await identifyAccount(ctx, tokens, request);
      if (pending.intent === 'sign-in') {
        // Signing in changes nothing: the grant just made is not stored (the connection keeps its own).
        const existing = await ctx.connections.idOfAccount(account.upstreamUserId);
        if (existing === undefined) return notConnectedPage(reply, account.displayName ?? account.email);
        await owners.signIn(reply, existing);
        request.log.info({ connectionId: existing }, 'owner signed in');
        return seeOther(reply, '/me?notice=signed-in');
      }
      connection = await ctx.connections.upsertFromGrant({ ...account, tokens }, ctx.now());
    } catch (thrown: unknown) {
      if (!(thrown instanceof UpstreamError)) throw thrown;
      request.log.warn({ err: coerceError(thrown) }, 'connect callback failed upstream');
      throw upstreamFailure(thrown);
    }
    const { feed, token } = await ctx.feeds.ensureDefaultFeed(connection.id);
    try {
      await whileRedisAnswers(ctx.redis, () => ctx.enqueueSync([connection.id]));
    } catch (thrown: unknown) {
      // Connected all the same, and due now in Postgres: the scheduler queues the first sync once Redis is
      // back. The feed link is shown once only, so the page must not be lost to this.
      if (!(thrown instanceof RedisUnavailableError)) throw thrown;
      request.log.warn(
        { connectionId: connection.id, reason: thrown.reason },
        'first sync not queued: Redis',
      );
    }
    request.log.info({ connectionId: connection.id, feedId: feed.id, newFeed: token !== null }, 'connected');
    await owners.signIn(reply, connection.id);
    return seeOther(reply, `/me?notice=${token === null ? 'reconnected' : 'connected'}`);
  });
}
