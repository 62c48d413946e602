// Wires one simulator: context → fastify (API, auth server, control API) → listening socket.
import { setMaxListeners } from 'node:events';
import type { AddressInfo } from 'node:net';
import formbody from '@fastify/formbody';
import Fastify from 'fastify';
import type { FastifyError } from 'fastify';
import { registerApiRoutes } from './api-routes.js';
import { registerAuthRoutes } from './auth-routes.js';
import { createSimContext } from './context.js';
import { createSimulatorControl } from './control.js';
import { registerControlRoutes } from './control-routes.js';
import type { RunningSimulator, SimulatorOptions } from './types.js';
import { SimulatorControlError } from './types.js';

function originOf(address: AddressInfo): string {
  // A wildcard bind is reachable on loopback; clients need a concrete host in URLs.
  const host =
    address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '[::1]' : address.address;
  return `http://${address.family === 'IPv6' && !host.startsWith('[') ? `[${host}]` : host}:${address.port}`;
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const shutdown = new AbortController();
  // Every delayed request listens on this signal; dozens at once is normal, not a leak.
  setMaxListeners(0, shutdown.signal);
  const ctx = createSimContext(options, shutdown.signal);
  const control = createSimulatorControl(ctx);
  // forceCloseConnections: close() must not wait for hanging requests or idle keep-alive sockets.
  const app = Fastify({ logger: false, forceCloseConnections: true });

  app.setErrorHandler((error: FastifyError | SimulatorControlError, _request, reply) => {
    if (error instanceof SimulatorControlError) {
      return reply.code(error.status).send({ error: 'control_error', message: error.message });
    }
    const status = typeof error.statusCode === 'number' && error.statusCode < 500 ? error.statusCode : 500;
    if (status >= 500) {
      ctx.logger.warn({ err: error.message }, 'simulator internal error');
      return reply.code(500).send({ error: 'internal_error', message: 'Internal error' });
    }
    return reply.code(status).send({ error: 'bad_request', message: error.message });
  });
  app.setNotFoundHandler((_request, reply) =>
    reply.code(404).send({ error: 'not_found', message: 'No such route' }),
  );

  await app.register(formbody);
  await app.register(async (api) => registerApiRoutes(api, ctx), { prefix: '/api' });
  await app.register(async (auth) => registerAuthRoutes(auth, ctx), { prefix: '/auth' });
  await app.register(async (sim) => registerControlRoutes(sim, control), { prefix: '/__sim' });

  await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
  ctx.origin = originOf(app.server.address() as AddressInfo);
  ctx.logger.info({ origin: ctx.origin, users: ctx.users.length }, 'calendbook simulator listening');

  let closing: Promise<void> | null = null;
  return {
    origin: ctx.origin,
    baseUrl: `${ctx.origin}/api`,
    authUrl: `${ctx.origin}/auth`,
    clientId: ctx.client.id,
    clientSecret: ctx.client.secret,
    redirectUris: [...ctx.client.redirectUris],
    users: ctx.users.map((u) => ({
      id: u.id,
      email: u.profile.email,
      name: u.profile.name,
      timezone: u.profile.timezone,
    })),
    control,
    close() {
      // Safe to call twice; the abort ends injected delays so their handlers give up.
      closing ??= (async () => {
        shutdown.abort();
        await app.close();
      })();
      return closing;
    },
  };
}
