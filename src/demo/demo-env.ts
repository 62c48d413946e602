// The environment the demo's daemon is configured from: the caller's own variables (so SYNC_*, FEED_* and the
// like can still be tuned), with everything that ties the pieces of the demo together set by the demo. It goes
// through the same loadConfig as `slotfeed start`, so the demo runs the configuration code it shows off.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI_ENV_FILE_NAME, DEFAULT_DATA_DIR_NAME } from './cli-env-file.js';
import type { DemoSecrets } from './demo-secrets.js';

type Env = Record<string, string | undefined>;

/** The checkout (or install) the CLI runs from: two levels above this file in src/demo and in dist/demo. */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The demo's Redis key prefix: one per data directory, so two checkouts' demos on one Redis keep their queues,
 * locks and limits apart, and a restart of one finds its own again. REDIS_PREFIX, when set, wins.
 */
export function demoRedisPrefix(dataDir: string): string {
  return `slotfeed-demo-${createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 8)}`;
}

export interface DemoPaths {
  /** `.slotfeed/` in the project, or SLOTFEED_DATA_DIR. */
  dataDir: string;
  secretsFile: string;
  /** What the CLI needs to reach the running demo (cli-env-file.ts). */
  cliEnvFile: string;
  /** The web port of the first run, kept so feed URLs survive a restart (demo-port.ts). */
  webPortFile: string;
  /** The simulator's bookings, changes and grants (simulator state file). */
  simulatorStateFile: string;
  /** How far the first run's history got, so a history stopped half way is finished (history-record.ts). */
  historyFile: string;
  postgresDir: string;
  migrationsDir: string;
}

export function demoPaths(env: Env, projectRoot: string = PROJECT_ROOT): DemoPaths {
  const dataDir = path.resolve(env.SLOTFEED_DATA_DIR || path.join(projectRoot, DEFAULT_DATA_DIR_NAME));
  return {
    dataDir,
    secretsFile: path.join(dataDir, 'demo.json'),
    cliEnvFile: path.join(dataDir, CLI_ENV_FILE_NAME),
    webPortFile: path.join(dataDir, 'web-port'),
    simulatorStateFile: path.join(dataDir, 'simulator.json'),
    historyFile: path.join(dataDir, 'history.json'),
    postgresDir: path.join(dataDir, 'postgres'),
    migrationsDir: path.join(projectRoot, 'prisma', 'migrations'),
  };
}

export interface DemoEnvInput {
  env: Env;
  databaseUrl: string;
  redisUrl: string;
  redisPrefix: string;
  logLevel: string;
  simulator: { baseUrl: string; authUrl: string; clientId: string; clientSecret: string };
  webPort: number;
  publicBaseUrl: string;
  secrets: DemoSecrets;
}

/**
 * Defaults of the demo's own, used when the caller has not set them: the simulator imposes no rate limit, and
 * the production default (20 requests per second, kind to the real service) would make the first syncs take
 * several times longer while showing nothing more. The history a fresh demo records (demo-history.ts) was some
 * 8,000 calls when this was chosen (5,000 since): at 1,000 a second the limiter itself was the bound (8 s at best, and its waits are timers, which
 * a loaded machine stretches: 85 s against 25 s at 20,000 in one run on a loaded 2-core machine). At 20,000
 * every call still goes through the limiter, and the CPU bounds them.
 */
const DEMO_DEFAULTS: Env = { UPSTREAM_RATE_LIMIT_PER_SECOND: '20000', UPSTREAM_RATE_LIMIT_BURST: '50' };

function withDefaults(env: Env, defaults: Env): Env {
  const merged = { ...env };
  for (const [name, value] of Object.entries(defaults)) if (!merged[name]) merged[name] = value;
  return merged;
}

export function demoEnvironment(input: DemoEnvInput): Env {
  return {
    ...withDefaults(input.env, DEMO_DEFAULTS),
    DATABASE_URL: input.databaseUrl,
    REDIS_URL: input.redisUrl,
    REDIS_PREFIX: input.redisPrefix,
    LOG_LEVEL: input.logLevel,
    CALENDBOOK_BASE_URL: input.simulator.baseUrl,
    CALENDBOOK_AUTH_URL: input.simulator.authUrl,
    CALENDBOOK_CLIENT_ID: input.simulator.clientId,
    CALENDBOOK_CLIENT_SECRET: input.simulator.clientSecret,
    CALENDBOOK_REDIRECT_URI: `${input.publicBaseUrl}/oauth/callback`,
    CALENDBOOK_SCOPE: '',
    // The demo's tokens are sealed with the demo's key only; a key of the caller's real installation must
    // not be used (or needed) here.
    TOKEN_ENCRYPTION_KEY: input.secrets.tokenEncryptionKey,
    TOKEN_ENCRYPTION_KEYS_PREVIOUS: '',
    WEB_HOST: '127.0.0.1',
    WEB_PORT: String(input.webPort),
    PUBLIC_BASE_URL: input.publicBaseUrl,
    ADMIN_TOKEN: input.secrets.adminToken,
    // A receiver on this machine is what a person trying webhooks has; only the demo allows it by default.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    // The demo's own CalDAV server is on loopback (local-caldav.ts); so is a person's Radicale or Nextcloud here.
    CALDAV_ALLOW_PRIVATE_TARGETS: 'true',
  };
}
