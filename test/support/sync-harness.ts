// Everything a sync test needs, wired by the same composition functions the daemon uses: a fresh database,
// a Redis prefix of its own, the simulator on an ephemeral port, and slotfeed's services pointed at them.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config.js';
import { Releasers } from '../../src/lib/releasers.js';
import { createLogger } from '../../src/log.js';
import { DAEMON_SECTIONS, type DaemonConfig } from '../../src/composition/daemon-config.js';
import type { Clients } from '../../src/composition/clients.js';
import type { RoleName, Slotfeed } from '../../src/composition/roles.js';
import type { Services } from '../../src/composition/services.js';
import type { Stores } from '../../src/composition/stores.js';
import { composeSlotfeed, startRoles } from '../../src/main.js';
import type { Clock } from '../../src/composition/clock.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { createOAuthClient } from '../../src/upstream/index.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { createTestRedis, type TestRedis } from './redis.js';

export const REDIRECT_URI = 'http://127.0.0.1:3999/oauth/callback';

/**
 * A clock the test moves by hand; the simulator and slotfeed read the same one. Its timers (`every`: the
 * scheduler's watchdog) fire when a move reaches them, once per move however many periods it spans;
 * `timersSettled()` waits for what the fired runs started, so a test can look once the run is over.
 */
export class FakeClock implements Clock {
  private timers = new Set<{ periodMs: number; dueMs: number; run: () => Promise<void> }>();
  private running = new Set<Promise<void>>();
  constructor(private current: Date) {}
  now = () => new Date(this.current);
  random = () => 0.5;
  every = (periodMs: number, run: () => Promise<void>) => {
    const timer = { periodMs, dueMs: this.current.getTime() + periodMs, run };
    this.timers.add(timer);
    return () => void this.timers.delete(timer);
  };
  set(iso: string) {
    this.current = new Date(iso);
    this.fireDueTimers();
  }
  advance(seconds: number) {
    this.current = new Date(this.current.getTime() + seconds * 1000);
    this.fireDueTimers();
  }
  /** Resolves when every run the timers started so far has finished. */
  async timersSettled(): Promise<void> {
    await Promise.all(this.running);
  }
  private fireDueTimers() {
    const nowMs = this.current.getTime();
    for (const timer of this.timers) {
      if (timer.dueMs > nowMs) continue;
      timer.dueMs = nowMs + timer.periodMs;
      const run = timer.run().finally(() => this.running.delete(run));
      run.catch(() => undefined); // a failed run is timersSettled()'s to report, if anyone waits for it
      this.running.add(run);
    }
  }
}

export interface HarnessOptions {
  simulator?: SimulatorOptions;
  /** Extra environment (SYNC_*, WORKER_*, …) over the test defaults. */
  env?: Record<string, string>;
  /** Defaults to a FakeClock at 2026-03-02T09:00:00Z; pass `null` for the real clock. */
  clock?: Clock | null;
  /**
   * The redirect URI registered with the simulator and used by slotfeed's OAuth client; defaults to
   * REDIRECT_URI. Web tests pass their app's real /oauth/callback URL.
   */
  redirectUri?: string;
  /** The Redis to use (default: the shared one, under a prefix of the test's own). */
  redisUrl?: string;
  /** Superuser URL of the Postgres to create the test database on (default: the shared one). */
  databaseAdminUrl?: string;
  /** Collects slotfeed's log lines (JSON, level info and up) instead of LOG_LEVEL's silence. */
  logLines?: string[];
}

/** One slotfeed "process": its clients, stores and services, and what releases them. */
export interface Peer extends Slotfeed {
  releasers: Releasers;
}

export interface SyncHarness {
  db: TestDatabase;
  redis: TestRedis;
  sim: RunningSimulator;
  env: Record<string, string>;
  config: DaemonConfig;
  clients: Clients;
  stores: Stores;
  services: Services;
  clock: Clock;
  /** Connects a simulated user through the OAuth authorization code flow; returns the connection id. */
  connect(email: string): Promise<string>;
  /** A second, independent slotfeed "process" (own clients, stores and services) on the same database and Redis. */
  spawnPeer(): Promise<Peer>;
  startRoles(roles: RoleName[], peer?: Peer): Promise<void>;
  close(): Promise<void>;
}

export async function createSyncHarness(label: string, options: HarnessOptions = {}): Promise<SyncHarness> {
  const clock =
    options.clock === null
      ? { now: () => new Date(), random: Math.random }
      : (options.clock ?? new FakeClock(new Date('2026-03-02T09:00:00Z')));
  const redirectUri = options.redirectUri ?? REDIRECT_URI;
  const db = await createTestDatabase(
    label,
    options.databaseAdminUrl === undefined ? {} : { adminUrl: options.databaseAdminUrl },
  );
  const redis = await createTestRedis(label, options.redisUrl);
  const sim = await startSimulator({
    users: 3,
    seed: 7,
    redirectUris: [redirectUri],
    ...(options.clock === null ? {} : { now: clock.now }),
    ...options.simulator,
  });
  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    REDIS_URL: redis.url,
    REDIS_PREFIX: redis.prefix,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    CALENDBOOK_BASE_URL: sim.baseUrl,
    CALENDBOOK_AUTH_URL: sim.authUrl,
    CALENDBOOK_CLIENT_ID: sim.clientId,
    CALENDBOOK_CLIENT_SECRET: sim.clientSecret,
    CALENDBOOK_REDIRECT_URI: redirectUri,
    CALENDBOOK_TIMEOUT_MS: '3000',
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    SYNC_BACKOFF_MS: '50',
    UPSTREAM_RATE_LIMIT_PER_SECOND: '0',
    WORKER_LOCK_SECONDS: '5',
    SHUTDOWN_GRACE_SECONDS: '5',
    ...options.env,
  };
  const config = loadConfig(env, DAEMON_SECTIONS);
  const lines = options.logLines;
  const logger = createLogger({
    level: lines ? 'info' : config.log.level,
    ...(lines
      ? {
          destination: new Writable({
            write(chunk: Buffer, _encoding, done) {
              lines.push(chunk.toString('utf8'));
              done();
            },
          }),
        }
      : {}),
  });

  const peers: Releasers[] = [];
  const spawnPeer = async (): Promise<Peer> => {
    const releasers = new Releasers();
    peers.push(releasers);
    return { ...composeSlotfeed(config, releasers, logger, clock), releasers };
  };
  const main = await spawnPeer();

  const oauth = createOAuthClient({
    authUrl: sim.authUrl,
    clientId: sim.clientId,
    clientSecret: sim.clientSecret,
    redirectUri,
    timeoutMs: 3000,
    now: clock.now,
  });

  return {
    db,
    redis,
    sim,
    env,
    config,
    clients: main.clients,
    stores: main.stores,
    services: main.services,
    clock,
    async connect(email) {
      const request = oauth.buildAuthorizationRequest({ loginHint: email });
      const response = await fetch(request.url, { redirect: 'manual' });
      const location = new URL(response.headers.get('location') ?? '');
      const code = location.searchParams.get('code');
      if (!code || location.searchParams.get('state') !== request.state)
        throw new Error(`login failed: ${location}`);
      const tokens = await oauth.exchangeCode(code, request.codeVerifier);
      const connection = await main.stores.connections.upsertFromGrant(
        { upstreamUserId: tokens.subject ?? email, email, tokens },
        clock.now(),
      );
      return connection.id;
    },
    spawnPeer,
    async startRoles(roles, peer = main) {
      await startRoles(roles, config, peer, peer.releasers, clock);
    },
    async close() {
      for (const releasers of peers.reverse()) await releasers.releaseAll();
      await sim.close();
      await redis.cleanup();
      await db.drop();
    },
  };
}
