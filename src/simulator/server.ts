// Wires one simulator: its state file (if any) → context → fastify (API, auth server, control API) → listening
// socket. With a state file the world it holds is loaded before anything listens, written once listening (a fresh
// world's genesis, and the new address its tokens are signed as), after every change, and last by close().
import { setMaxListeners } from 'node:events';
import type { AddressInfo } from 'node:net';
import formbody from '@fastify/formbody';
import Fastify from 'fastify';
import type { FastifyError } from 'fastify';
import { registerApiRoutes } from './api-routes.js';
import { registerAuthRoutes } from './auth-routes.js';
import { inProcessFetch } from './in-process-fetch.js';
import type { SimContext } from './context.js';
import { createSimContext, stateOf, worldOf } from './context.js';
import { createSimulatorControl } from './control.js';
import { CONTROL_PREFIX, registerControlRoutes } from './control-routes.js';
import { readStateFile, writeStateFile } from './state-file.js';
import { SimulatorStateError } from './state-format.js';
import type { StateSaver } from './state-saver.js';
import { createStateSaver } from './state-saver.js';
import type { RunningSimulator, SimulatorOptions } from './types.js';
import { SimulatorControlError } from './types.js';

function originOf(address: AddressInfo): string {
  // A wildcard bind is reachable on loopback; clients need a concrete host in URLs.
  const host =
    address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '[::1]' : address.address;
  return `http://${address.family === 'IPv6' && !host.startsWith('[') ? `[${host}]` : host}:${address.port}`;
}

function stateSaverFor(file: string, ctx: () => SimContext): StateSaver {
  return createStateSaver(
    () => writeStateFile(file, stateOf(ctx())),
    (error) =>
      ctx().logger.warn(
        { err: error instanceof Error ? error.message : String(error), file },
        'simulator state not saved; trying again at the next change and at close',
      ),
  );
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const { stateFile } = options;
  const restored = stateFile ? await readStateFile(stateFile, worldOf(options)) : null;
  const shutdown = new AbortController();
  // Every delayed request listens on this signal; dozens at once is normal, not a leak.
  setMaxListeners(0, shutdown.signal);
  const saver = stateFile ? stateSaverFor(stateFile, () => ctx) : null;
  const ctx = createSimContext(options, shutdown.signal, {
    restored,
    stateChanged: () => saver?.changed(),
  });
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
  await app.register(async (sim) => registerControlRoutes(sim, control), { prefix: CONTROL_PREFIX });

  await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
  ctx.origin = originOf(app.server.address() as AddressInfo);
  if (saver && stateFile) {
    saver.changed();
    await saver.flush().catch(async (thrown: unknown) => {
      await app.close();
      throw new SimulatorStateError(
        stateFile,
        `cannot be written (${(thrown as NodeJS.ErrnoException).code ?? String(thrown)})`,
        'Make its directory writable by this user, or give the simulator another state file.',
      );
    });
  }
  ctx.logger.info(
    {
      origin: ctx.origin,
      users: ctx.users.length,
      ...(stateFile ? { stateFile, restored: !!restored } : {}),
    },
    'calendbook simulator listening',
  );

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
    inProcessFetch: inProcessFetch((request) => app.inject(request), ctx.origin),
    close() {
      // Safe to call twice; the abort ends injected delays so their handlers give up. The state is written
      // last, once no request can change it any more.
      closing ??= (async () => {
        shutdown.abort();
        await app.close();
        await saver?.flush();
      })();
      return closing;
    },
  };
}
