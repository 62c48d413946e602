// The scheduler role's state gauges, read at scrape time from the real Postgres and Redis: connections by status
// and jobs by queue and state, as the alert rules and the dashboard read them.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';

let h: SyncHarness;

beforeAll(async () => {
  h = await createSyncHarness('ops_state_gauges', { simulator: { users: 2 } });
  const [first, second] = h.sim.users;
  await h.connect(first!.email);
  const other = await h.connect(second!.email);
  await h.clients.prisma.connection.update({ where: { id: other }, data: { status: 'needs_reauth' } });
  await h.clients.syncQueue.add('sync-connection', { connectionId: other }, { delay: 3_600_000 });
  await h.startRoles(['scheduler']);
});
afterAll(async () => {
  await h?.close();
});

it('a scrape of the scheduler reads connections by status and queued jobs', async () => {
  const text = await h.clients.metrics.registry.metrics();
  expect(text).toContain('slotfeed_connections{status="active"} 1');
  expect(text).toContain('slotfeed_connections{status="needs_reauth"} 1');
  expect(text).toContain('slotfeed_connections{status="disabled"} 0');
  expect(text).toMatch(/slotfeed_queue_jobs\{queue="sync",state="delayed"\} [1-9]/);
  expect(text).toContain('slotfeed_queue_jobs{queue="webhooks",state="waiting"} 0');
});
