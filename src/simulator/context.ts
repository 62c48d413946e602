// One simulator's state and collaborators, built once per startSimulator and handed to every route module: a
// fresh world made from the seed, or the world a state file kept (state-format.ts says what that holds).
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
import type { SimulatorState, WorldIdentity } from './state-format.js';
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
  /** The start options the world was made with; a state file is only valid for the same. */
  world: WorldIdentity;
  /** Tells the state file, if there is one, that the world changed: called by every change to it. */
  stateChanged(): void;
  logger: SimLogger;
  /** Words the sign-in page shows beside a user (SimulatorOptions.signInNote). */
  signInNote: (user: SimUser, index: number) => string | undefined;
  /** Aborted by close(): ends injected latency and hanging requests. */
  shutdown: AbortSignal;
  /** Set once the server listens. */
  origin: string;
}

const silentLogger: SimLogger = { info: () => undefined, warn: () => undefined };

export function worldOf(options: SimulatorOptions): WorldIdentity {
  return {
    seed: options.seed ?? 1,
    users: options.users ?? 5,
    eventTypesPerUser: options.eventTypesPerUser ?? null,
  };
}

function freshUsers(world: WorldIdentity, startMs: number): SimUser[] {
  const users = generateUsers(derivePrng(world.seed, 'users'), world.users, startMs, {
    ...(world.eventTypesPerUser !== null ? { eventTypesPerUser: world.eventTypesPerUser } : {}),
  });
  seedBookings(users, derivePrng(world.seed, 'bookings'), startMs);
  return users;
}

export interface ContextState {
  /** The world a state file kept; absent: a fresh world from the seed, at the clock's now. */
  restored?: SimulatorState | null;
  stateChanged?: () => void;
}

export function createSimContext(
  options: SimulatorOptions,
  shutdown: AbortSignal,
  state: ContextState = {},
): SimContext {
  const world = worldOf(options);
  const restored = state.restored ?? undefined;
  const stateChanged = state.stateChanged ?? (() => undefined);
  const clock = createSimClock(options.now ?? (() => new Date()), options.clockSpeed ?? 1);
  const initialFaults = mergeFaultSettings(defaultFaultSettings(), {
    rateLimit: { requestsPerSecond: options.requestsPerSecondPerClient ?? 0 },
  });
  const ctx: SimContext = {
    clock,
    users: restored?.users ?? freshUsers(world, clock.nowMs()),
    client: {
      id: options.clientId ?? 'slotfeed-local',
      secret: options.clientSecret ?? 'slotfeed-local-secret',
      redirectUris: [...(options.redirectUris ?? ['http://127.0.0.1:3000/oauth/callback'])],
      rotateRefreshTokens: options.rotateRefreshTokens ?? false,
    },
    faults: createFaultEngine(
      mergeFaultSettings(initialFaults, options.faults ?? {}),
      derivePrng(world.seed, 'faults'),
      clock,
    ),
    driftPrng: derivePrng(world.seed, 'drift'),
    grants: createGrantStore(clock, {
      onChange: stateChanged,
      ...(options.onCredentialIssued ? { onIssued: options.onCredentialIssued } : {}),
      ...(restored ? { restored: restored.oauth } : {}),
    }),
    tokens: createAccessTokenIssuer({
      issuer: () => `${ctx.origin}/auth`,
      ttlSeconds: options.accessTokenTtlSeconds ?? 3600,
      clock,
      ...(options.onCredentialIssued ? { onIssued: options.onCredentialIssued } : {}),
      ...(restored ? { restored: restored.oauth } : {}),
    }),
    calls: createCallCounter(() => clock.nowMs()),
    changes: createChangeLog(restored?.changes),
    world,
    stateChanged,
    logger: options.logger ?? silentLogger,
    signInNote: (user, index) =>
      options.signInNote?.(
        { id: user.id, email: user.profile.email, name: user.profile.name, timezone: user.profile.timezone },
        index,
      ),
    shutdown,
    origin: '',
  };
  return ctx;
}

/** Everything a state file keeps of this simulator, as it is now. */
export function stateOf(ctx: SimContext): SimulatorState {
  const { signingKey } = ctx.tokens;
  return {
    world: ctx.world,
    users: ctx.users,
    changes: ctx.changes.list(),
    oauth: { ...ctx.grants.snapshot(), signingKey, issuers: ctx.tokens.issuers() },
  };
}
