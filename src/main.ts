// The composition root: config → clients → stores → services → roles, in that order and nowhere else.
// Nothing outside main.ts, composition/ and roles/ constructs a Prisma client, a Redis connection, a Postgres
// session or a queue; the daemon's commands (cli/commands.ts), the demo and the tests compose a process here,
// the commands over stored data open theirs in composition/command-stores.ts.
import type { Releasers } from './lib/releasers.js';
import type { Logger } from './log.js';
import { openClients } from './composition/clients.js';
import { systemClock, type Clock } from './composition/clock.js';
import type { DaemonConfig } from './composition/daemon-config.js';
import { composeRoles, type RoleName, type Slotfeed } from './composition/roles.js';
import { composeServices } from './composition/services.js';
import { createStores } from './composition/stores.js';

/** Opens this process's clients (closed by `releasers`, newest first), and the stores and services over them. */
export function composeSlotfeed(
  config: DaemonConfig,
  releasers: Releasers,
  logger: Logger,
  clock: Clock = systemClock,
  /** What the syncs' upstream clients send with; absent: the global fetch. */
  upstreamFetch?: typeof fetch,
): Slotfeed {
  const clients = openClients(config, releasers, logger);
  const stores = createStores(config, clients);
  const services = composeServices(config, clients, stores, clock, upstreamFetch);
  return { clients, stores, services };
}

/**
 * Starts the requested roles in order and registers each one's close() before its start(), so a role that
 * fails half way is released with the rest.
 */
export async function startRoles(
  names: readonly RoleName[],
  config: DaemonConfig,
  slotfeed: Slotfeed,
  releasers: Releasers,
  clock: Clock = systemClock,
): Promise<void> {
  if (config.sync.bandsBeyondHorizon.length > 0) {
    slotfeed.clients.logger.warn(
      { bands: config.sync.bandsBeyondHorizon, horizonDays: config.sync.horizonDays },
      'SYNC_BANDS has bands that start beyond SYNC_HORIZON_DAYS: they are left out',
    );
  }
  for (const role of composeRoles(names, config, slotfeed, releasers, clock)) {
    releasers.add(role.name, () => role.close());
    await role.start();
  }
}
