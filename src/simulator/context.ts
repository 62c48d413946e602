// One simulator's state and collaborators, built once per startSimulator and handed to every route module.
import { seedBookings } from './bookings.js';
import type { CallCounter } from './calls.js';
import { createCallCounter } from './calls.js';
import type { SimClock } from './clock.js';
import { createChangeLog, type ChangeLog } from './change-log.js';
import { createSimClock } from './clock.js';
import { generateUsers } from './data.js';
import type { FaultEngine } from './faults.js';
import { createFaultEngine, defaultFaultSettings, mergeFaultSettings } from './faults.js';
import type { GrantStore } from './grants.js';
import { createGrantStore } from './grants.js';
import type { Prng } from './prng.js';
import { derivePrng } from './prng.js';
import type { AccessTokenIssuer } from './tokens.js';
import { createAccessTokenIssuer } from './tokens.js';
import type { SimLogger, SimUser, SimulatorOptions } from './types.js';

export interface RegisteredClient {
  id: string;
  secret: string;
  redirectUris: string[];
  rotateRefreshTokens: boolean;
}

export interface SimContext {
  clock: SimClock;
  users: SimUser[];
  client: RegisteredClient;
  faults: FaultEngine;
  /** Picks invalid-shape variants; separate from the fault stream so drift does not shift fault decisions. */
  driftPrng: Prng;
  grants: GrantStore;
  tokens: AccessTokenIssuer;
  calls: CallCounter;
  changes: ChangeLog;
  logger: SimLogger;
  /** Aborted by close(): ends injected latency and hanging requests. */
  shutdown: AbortSignal;
  /** Set once the server listens. */
  origin: string;
}

const silentLogger: SimLogger = { info: () => undefined, warn: () => undefined };

export function createSimContext(options: SimulatorOptions, shutdown: AbortSignal): SimContext {
  const seed = options.seed ?? 1;
  const clock = createSimClock(options.now ?? (() => new Date()), options.clockSpeed ?? 1);
  const startMs = clock.nowMs();
  const users = generateUsers(derivePrng(seed, 'users'), options.users ?? 5, startMs, {
    ...(options.eventTypesPerUser !== undefined ? { eventTypesPerUser: options.eventTypesPerUser } : {}),
  });
  seedBookings(users, derivePrng(seed, 'bookings'), startMs);
  const initialFaults = mergeFaultSettings(defaultFaultSettings(), {
    rateLimit: { requestsPerSecond: options.requestsPerSecondPerClient ?? 0 },
  });
  const ctx: SimContext = {
    clock,
    users,
    client: {
      id: options.clientId ?? 'slotfeed-local',
      secret: options.clientSecret ?? 'slotfeed-local-secret',
      redirectUris: [...(options.redirectUris ?? ['http://127.0.0.1:3000/oauth/callback'])],
      rotateRefreshTokens: options.rotateRefreshTokens ?? false,
    },
    faults: createFaultEngine(
      mergeFaultSettings(initialFaults, options.faults ?? {}),
      derivePrng(seed, 'faults'),
      clock,
    ),
    driftPrng: derivePrng(seed, 'drift'),
    grants: createGrantStore(clock, options.onCredentialIssued),
    tokens: createAccessTokenIssuer({
      issuer: () => `${ctx.origin}/auth`,
      ttlSeconds: options.accessTokenTtlSeconds ?? 3600,
      clock,
      ...(options.onCredentialIssued ? { onIssued: options.onCredentialIssued } : {}),
    }),
    calls: createCallCounter(() => clock.nowMs()),
    changes: createChangeLog(),
    logger: options.logger ?? silentLogger,
    shutdown,
    origin: '',
  };
  return ctx;
}
