// What the daemon, migrate and simulator commands do, built on the composition root (main.ts): load the config
// the command needs, open clients, run, and release everything in order, also on failure. The commands over
// stored data have files of their own (connections-, feeds-, report- and sync-command.ts).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../config.js';
import { createLoggerFor, type Logger } from '../log.js';
import { Releasers } from '../lib/releasers.js';
import { untilShutdownSignal } from '../lib/shutdown-signal.js';
import { DAEMON_SECTIONS } from '../composition/daemon-config.js';
import type { RoleName } from '../composition/roles.js';
import { composeSlotfeed, startRoles } from '../main.js';
import {
  applyPendingMigrations,
  markMigrationRolledBack,
  migrationStatus,
} from '../store/migrations/index.js';
import type { SimulatorOptions } from '../simulator/index.js';

type Env = Record<string, string | undefined>;

/** prisma/migrations, found from this file whether it runs from src/ (tests) or dist/ (the built CLI). */
export const MIGRATIONS_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'prisma',
  'migrations',
);

import type { Output } from '../lib/output.js';

export type { Output };

function loggerFor(env: Env): Logger {
  const { log } = loadConfig(env, ['log']);
  return createLoggerFor(log);
}

/**
 * `slotfeed migrate`: applies pending migrations; with `status`, only reports them; with `rolledBack`, marks a
 * failed migration as rolled back (as `prisma migrate resolve --rolled-back` does) so it can be applied again.
 */
export async function runMigrate(
  env: Env,
  options: { status: boolean; rolledBack?: string },
  out: Output,
): Promise<void> {
  const config = loadConfig(env, ['database', 'log']);
  const logger = createLoggerFor(config.log);
  const runner = { databaseUrl: config.database.url, migrationsDir: MIGRATIONS_DIR, logger };
  if (options.rolledBack) {
    await markMigrationRolledBack(runner, options.rolledBack);
    out.write(`Marked ${options.rolledBack} as rolled back; fix it and run \`slotfeed migrate\` again.\n`);
    return;
  }
  if (options.status) {
    const status = await migrationStatus(runner);
    out.write(
      [
        `applied: ${status.applied.length}`,
        ...status.pending.map((name) => `pending: ${name}`),
        ...status.modified.map((name) => `modified after it was applied: ${name}`),
        ...status.failed.map((name) => `failed: ${name}`),
        ...status.missingLocally.map((name) => `applied but missing from prisma/migrations: ${name}`),
      ].join('\n') + '\n',
    );
    return;
  }
  const result = await applyPendingMigrations(runner);
  out.write(
    result.applied.length === 0
      ? `Database is up to date (${result.alreadyApplied.length} migrations applied earlier).\n`
      : `Applied ${result.applied.length} migration(s):\n${result.applied.map((n) => `  ${n}\n`).join('')}`,
  );
}

/**
 * `slotfeed simulator`: the scheduling service's stand-in, until SIGINT/SIGTERM. Resolves once it is shut
 * down; the returned promise is what keeps the process alive.
 */
export async function runSimulator(env: Env, options: SimulatorOptions, out: Output): Promise<void> {
  const logger = loggerFor(env).child({ role: 'simulator' });
  const releasers = new Releasers();
  // Loaded here only: the daemon's processes (`slotfeed worker`, …) never carry the simulator.
  const { startSimulator, formatSimulatorBanner } = await import('../simulator/index.js');
  const simulator = await startSimulator({ ...options, logger });
  releasers.add('simulator', () => simulator.close());
  out.write(formatSimulatorBanner(simulator) + '\n');
  await untilShutdownSignal(logger);
  await releasers.releaseAll(logger);
}

/** `slotfeed start | worker | scheduler`: runs the roles until SIGINT/SIGTERM, then shuts down in order. */
export async function runDaemon(env: Env, roles: readonly RoleName[]): Promise<void> {
  const config = loadConfig(env, DAEMON_SECTIONS);
  const logger = createLoggerFor(config.log);
  const releasers = new Releasers();
  try {
    await startRoles(roles, config, composeSlotfeed(config, releasers, logger), releasers);
    logger.info({ roles }, 'slotfeed running');
    await untilShutdownSignal(logger);
  } finally {
    await releasers.releaseAll(logger);
  }
}
