// The one place the web role's fastify app is assembled: plugins first (cookies, forms, compression), then
// the error handlers and request logging, then the routes. Everything it uses arrives in WebDeps.
import type { AddressInfo } from 'node:net';
import compress from '@fastify/compress';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { redactText } from '../log.js';
import { createAdminAuth } from './admin-auth.js';
import { loginPage } from './admin-pages.js';
import { registerAdminRoutes, registerAdminSession } from './admin-routes.js';
import { registerConnectRoutes } from './connect-routes.js';
import { installErrorHandlers, prefersHtml, sendError } from './error-handler.js';
import { registerFeedRoutes } from './feed-routes.js';
import { registerHealthRoutes } from './health-routes.js';
import { registerQueueDashboard } from './queue-dashboard.js';
import { registerReportRoutes } from './report-routes.js';
import type { WebDeps } from './web-deps.js';

export type { WebDeps, WebSettings } from './web-deps.js';

// Probes and scrapes arrive every few seconds; at info level they would drown the log.
const QUIET_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

export async function buildWebApp(deps: WebDeps): Promise<FastifyInstance> {
  const app = Fastify({
    // The composition root passes a logger already scoped to the web role.
    loggerInstance: deps.logger,
    // fastify's own request lines carry the raw URL, feed token and authorization code included; the
    // onResponse hook below logs a redacted one instead.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: deps.settings.trustProxy,
    bodyLimit: 64 * 1024,
    // Room for any plausible token to reach the feed route and its uniform 404 (longer params get a 414).
    routerOptions: { maxParamLength: 512 },
    // Typed with pino's Logger, the instance is not assignable to the plain FastifyInstance the route
    // modules take (a variance quirk of fastify's generics); at runtime it is the same object.
  }) as unknown as FastifyInstance;

  const auth = createAdminAuth({
    adminToken: deps.settings.adminToken,
    publicBaseUrl: deps.settings.publicBaseUrl,
    now: deps.now,
    onUnauthenticated: (request, reply) =>
      prefersHtml(request)
        ? loginPage(reply, 401, { next: request.url.startsWith('/admin/queues') ? '/admin/queues' : '/' })
        : sendError(request, reply, 401, 'Admin credentials needed: Authorization: Bearer <ADMIN_TOKEN>.'),
  });

  await app.register(cookie, { secret: auth.cookieSecret });
  await app.register(formbody);
  // Before Bull Board's @fastify/static, as @fastify/compress requires; the feed route compresses itself.
  await app.register(compress, { global: true, encodings: ['gzip'] });

  installErrorHandlers(app);
  app.addHook('onResponse', async (request, reply) => {
    const line = {
      method: request.method,
      url: redactText(request.url),
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime),
    };
    if (QUIET_ROUTES.has(request.routeOptions.url ?? '')) request.log.debug(line, 'request');
    else request.log.info(line, 'request');
  });

  registerHealthRoutes(app, deps);
  registerFeedRoutes(app, deps);
  registerConnectRoutes(app, deps);
  registerAdminSession(app, deps, auth);
  await app.register(async (admin) => {
    admin.addHook('onRequest', auth.requireAdmin);
    registerAdminRoutes(admin, deps);
    registerReportRoutes(admin, deps);
    await registerQueueDashboard(admin, deps);
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
