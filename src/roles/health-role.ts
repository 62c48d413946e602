// The health role: when this process runs no web role but HEALTH_PORT is set (`slotfeed worker`, `slotfeed
// scheduler`), a small server of readiness, liveness and metrics (web/health-server.ts).
import type { Logger } from '../log.js';
import { startHealthServer, type HealthServerDeps } from '../web/health-server.js';
import { startedParts, type Role } from './role.js';

export interface HealthRoleDeps {
  server: HealthServerDeps;
  /** Where to say the server listens. */
  logger: Logger;
}

export function createHealthRole(deps: HealthRoleDeps): Role {
  const parts = startedParts();
  return {
    name: 'health',
    async start() {
      const health = await startHealthServer(deps.server);
      parts.add('health server', () => health.close());
      deps.logger.info({ url: health.url }, 'health server listening');
    },
    close: parts.close,
  };
}
