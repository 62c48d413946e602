// The one place the web role's fastify app is assembled: the error handlers and request logging, the rate
// limits, the feed and health routes, then the pages and their plugins (cookies, forms, compression).
// Everything it uses arrives in WebDeps.
import type { AddressInfo } from 'node:net';
import compress from '@fastify/compress';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { installAccessLog } from './access-log.js';
import { createApiAccess } from './api/api-access.js';
import { registerApiDocument, registerApiReference } from './api/api-docs.js';
import { registerApiRoutes } from './api/api-routes.js';
import { registerAssetRoutes } from './assets.js';
import { createAdminAuth } from './admin/admin-auth.js';
import { registerAdminConnectionPage } from './admin/admin-connection-page.js';
import { registerAdminShareLinkRoutes } from './admin/admin-share-link-routes.js';
import { ADMIN_HOME, loginPage } from './admin/admin-pages.js';
import { registerAdminTeamRoutes } from './admin/admin-team-routes.js';
import { registerAdminApiRoutes } from './admin/admin-api-routes.js';
import { registerAdminRoutes, registerAdminSession } from './admin/admin-routes.js';
import { createAdminSessions } from './admin/admin-sessions.js';
import { registerConnectRoutes } from './owner/connect-routes.js';
import { answerFrameworkError, installErrorHandlers, prefersHtml, sendError } from './error-handler.js';
import { registerFeedRoutes } from './feeds/feed-routes.js';
import { registerHealthRoutes, webReadiness } from './health-routes.js';
import { registerLandingPage } from './landing-page.js';
import { createOwnerAuth } from './owner/owner-auth.js';
import { registerOwnerRoutes } from './owner/owner-routes.js';
import { createOwnerSessions } from './owner/owner-sessions.js';
import { registerQueueDashboard } from './admin/queue-dashboard.js';
import { feedRateLimitHook, registerRateLimits } from './rate-limits.js';
import { registerReportRoutes } from './admin/report-routes.js';
import { createSignInLockout } from './admin/sign-in-lockout.js';
import { registerShareRoutes } from './share/share-routes.js';
import { createFeedServing } from '../serving/feed-serving.js';
import type { WebDeps } from './web-deps.js';

export type { WebDeps, WebSettings } from './web-deps.js';

export async function buildWebApp(deps: WebDeps): Promise<FastifyInstance> {
  const app = Fastify({
    // The composition root passes a logger already scoped to the web role.
    loggerInstance: deps.logger,
    // fastify's own request lines carry the raw URL, feed token and authorization code included; the
    // onResponse hook below logs a redacted one instead.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: deps.settings.trustProxy,
    bodyLimit: 64 * 1024,
    // A client must send its whole request (headers and body) within this time, or get 408 and lose the
    // connection: without it, bodies trickled a byte at a time held sockets and memory for as long as the
    // sender liked. Node checks for late requests every connectionsCheckingInterval (30 s by default).
    requestTimeout: deps.settings.requestTimeoutMs,
    http: {
      headersTimeout: deps.settings.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, Math.ceil(deps.settings.requestTimeoutMs / 4)),
    },
    // Room for any plausible token to reach the feed route and its uniform 404 (longer params get a 414).
    routerOptions: { maxParamLength: 512 },
    // The router's own refusals (bad percent-encoding, a param past maxParamLength) answered as every error is.
    frameworkErrors: answerFrameworkError,
    // Typed with pino's Logger, the instance is not assignable to the plain FastifyInstance the route
    // modules take (a variance quirk of fastify's generics); at runtime it is the same object.
  }) as unknown as FastifyInstance;

  if (deps.settings.trustProxy === true) {
    deps.logger.warn(
      'TRUST_PROXY=true believes every X-Forwarded-For hop, so a client can choose the address its rate limits count; set TRUST_PROXY to the proxies’ addresses instead',
    );
  }
  installErrorHandlers(app);
  installAccessLog(app, deps.logger);
  await registerRateLimits(app, {
    redis: deps.redis,
    redisPrefix: deps.settings.redisPrefix,
    logger: deps.logger,
  });

  await registerApiDocument(app);

  const auth = createAdminAuth({
    adminToken: deps.settings.adminToken,
    publicBaseUrl: deps.settings.publicBaseUrl,
    sessionSeconds: deps.settings.adminSessionSeconds,
    sessions: createAdminSessions(deps.redis, deps.settings.redisPrefix, deps.settings.adminSessionSeconds),
    lockout: createSignInLockout({ redis: deps.redis, redisPrefix: deps.settings.redisPrefix }),
    now: deps.now,
    onUnauthenticated: (request, reply) =>
      prefersHtml(request)
        ? loginPage(reply, 401, { next: request.method === 'GET' ? request.url : ADMIN_HOME })
        : sendError(request, reply, 401, 'Admin credentials needed: Authorization: Bearer <ADMIN_TOKEN>.'),
  });

  // Feeds as served, and what they answer with while Postgres cannot: shared by the feed route and readiness
  // (a replica that can serve feeds from memory stays ready for feed traffic).
  const feedServing = createFeedServing({
    feeds: deps.feeds,
    content: deps.feedContent,
    eventRevisions: deps.eventRevisions,
    changes: deps.feedChanges,
    settings: deps.settings,
    now: deps.now,
    observe: {
      lookup: (result) => deps.metrics.feedLookups.inc({ result }),
      renderCache: (result) => deps.metrics.feedRenderCache.inc({ result }),
      recheck: (result) => deps.metrics.feedLastGoodRechecks.inc({ result }),
    },
  });
  app.addHook('onClose', async () => feedServing.close());

  // Feeds and probes take the most requests and need no cookies, forms or compression (the feed route
  // compresses itself, once per render): they live outside the context that registers those plugins.
  const web = webReadiness({
    postgresProbe: deps.postgresProbe,
    redis: deps.redis,
    canServeFeedsFromMemory: () => feedServing.lastGood.canServeAny(),
  });
  const otherRoles = deps.roleReadiness ?? {};
  registerHealthRoutes(app, {
    readiness: { checks: { ...web, ...otherRoles }, primary: ['feeds', ...Object.keys(otherRoles)] },
    metrics: deps.metrics,
  });
  await app.register(async (feeds) => {
    const limit = feedRateLimitHook(feeds, deps.settings.rateLimits.feedsPerMinute);
    if (limit) feeds.addHook('onRequest', limit);
    registerFeedRoutes(feeds, deps, feedServing);
  });
  await app.register(async (api) => {
    registerApiRoutes(
      api,
      deps,
      createApiAccess({ apiKeys: deps.apiKeys, feeds: deps.feeds, now: deps.now }),
    );
  });
  // Share pages set their own headers and compress once per render, as feeds do.
  await app.register(async (share) => registerShareRoutes(share, deps, feedServing));
  await registerApiReference(app);
  registerAssetRoutes(app);
  await app.register(async (site) => {
    await site.register(cookie, { secret: auth.cookieSecret });
    await site.register(formbody);
    // Before Bull Board's @fastify/static, as @fastify/compress requires.
    await site.register(compress, { global: true, encodings: ['gzip'] });
    const owners = createOwnerAuth({
      sessions: createOwnerSessions(deps.redis, deps.settings.redisPrefix, deps.settings.ownerSessionSeconds),
      publicBaseUrl: deps.settings.publicBaseUrl,
      sessionSeconds: deps.settings.ownerSessionSeconds,
    });
    registerLandingPage(site);
    registerConnectRoutes(site, deps, owners);
    registerOwnerRoutes(site, deps, owners, auth.assertSameOrigin);
    registerAdminSession(site, deps, auth);
    await site.register(async (admin) => {
      admin.addHook('onRequest', auth.requireAdmin);
      registerAdminRoutes(admin, deps);
      registerAdminTeamRoutes(admin, deps);
      registerAdminApiRoutes(admin, deps);
      registerAdminConnectionPage(admin, deps);
      registerAdminShareLinkRoutes(admin, deps);
      registerReportRoutes(admin, deps);
      await registerQueueDashboard(admin, deps);
    });
  });
  await app.ready();
  return app;
}

function originOf(address: AddressInfo): string {
  const host =
    address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '[::1]' : address.address;
  return `http://${address.family === 'IPv6' && !host.startsWith('[') ? `[${host}]` : host}:${address.port}`;
}

/** Builds the app and listens on settings.host:port; `close` is safe to call twice. */
export async function startWeb(deps: WebDeps): Promise<{ url: string; close(): Promise<void> }> {
  const app = await buildWebApp(deps);
  await app.listen({ host: deps.settings.host, port: deps.settings.port });
  const url = originOf(app.server.address() as AddressInfo);
  let closing: Promise<void> | undefined;
  return {
    url,
    close: () => (closing ??= app.close()),
  };
}
