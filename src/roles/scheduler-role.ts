// The scheduler role: the tick that enqueues due syncs (and its watchdog, sync/scheduler.ts), the retention
// runs that prune history, and the gauges of the installation's state, which one role per installation
// reports (lib/state-gauges.ts).
import type { Registry } from 'prom-client';
import { registerStateGauges, type StateReaders } from '../lib/state-gauges.js';
import { startRetention } from '../sync/retention-schedule.js';
import { startScheduler, type SchedulerDeps } from '../sync/scheduler.js';
import { startedParts, type Role } from './role.js';

export interface SchedulerRoleDeps {
  scheduler: SchedulerDeps;
  retention: Parameters<typeof startRetention>[0];
  stateGauges: { registry: Registry; readers: StateReaders };
}

export function createSchedulerRole(deps: SchedulerRoleDeps): Role {
  const parts = startedParts();
  return {
    name: 'scheduler',
    async start() {
      registerStateGauges(deps.stateGauges.registry, deps.stateGauges.readers);
      const retention = startRetention(deps.retention);
      parts.add('retention', () => retention.close());
      const scheduler = await startScheduler(deps.scheduler);
      parts.add('scheduler', () => scheduler.close());
    },
    close: parts.close,
  };
}
