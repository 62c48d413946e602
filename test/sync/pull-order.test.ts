// Commits ordered by pull: a pull that began before another, and commits after it, must not undo what the
// newer one saw. Run A pulls while a slot is open, waits; the slot is booked, run B pulls and commits; then
// A commits. A is refused as superseded (not a failure), and the booked slot stays closed.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { syncConnection, type SyncDeps } from '../../src/sync/sync-connection.js';
import { createSyncHarness, FakeClock, type SyncHarness } from '../support/sync-harness.js';

const clock = new FakeClock(new Date('2026-03-02T07:00:00Z'));
let h: SyncHarness;
let connectionId: string;

const attempt = () => ({ connectionId, jobId: null, attempt: 1, maxAttempts: 1 });

/**
 * Sync deps whose upstream holds back the answer of the pull's last call until `release()`: by then every call
 * has been answered by the simulator, so the pull has read the upstream as it was, and only its commit waits.
 */
function heldAtLastCall(deps: SyncDeps, calls: number) {
  let reached!: () => void;
  const atLastCall = new Promise<void>((resolve) => (reached = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let made = 0;
  const held: SyncDeps = {
    ...deps,
    upstreamFor(run) {
      const clients = deps.upstreamFor(run);
      const api = new Proxy(clients.api, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver) as unknown;
          if (typeof value !== 'function') return value;
          return async (...args: unknown[]) => {
            const answer = (await (value as (...a: unknown[]) => Promise<unknown>).apply(
              target,
              args,
            )) as unknown;
            made += 1;
            if (made === calls) {
              reached();
              await released;
            }
            return answer;
          };
        },
      });
      return { ...clients, api };
    },
  };
  return { deps: held, atLastCall, release };
}

beforeAll(async () => {
  h = await createSyncHarness('pull_order', { clock });
  connectionId = await h.connect(h.sim.users[0]!.email);
  await syncConnection(h.services.syncDeps, attempt());
});
afterAll(async () => {
  await h?.close();
});

describe('a pull that began before the last committed one', () => {
  it('is refused as superseded, and the slot the newer pull saw booked stays closed', async () => {
    const lastRun = await h.clients.prisma.syncRun.findFirstOrThrow({
      where: { connectionId },
      orderBy: { startedAt: 'desc' },
    });
    const calls = Object.values(lastRun.callsByEndpoint as Record<string, number>).reduce((a, b) => a + b, 0);
    const slot = await h.clients.prisma.slot.findFirstOrThrow({
      where: { connectionId, goneAt: null, startsAt: { gt: clock.now() } },
      orderBy: { startsAt: 'asc' },
    });

    clock.advance(60);
    const a = heldAtLastCall(h.services.syncDeps, calls);
    const runA = syncConnection(a.deps, attempt());
    await a.atLastCall;

    h.sim.control.book(slot.upstreamEventId, slot.startsAt.toISOString());
    clock.advance(60);
    const b = await syncConnection(h.services.syncDeps, attempt());
    expect(b.superseded).toBe(false);
    expect(b.slotsClosed).toBeGreaterThan(0);

    // A's commit comes after B's, a moment later on the clock too (the run rows are ordered by it).
    clock.advance(1);
    a.release();
    const late = await runA;
    expect(late.superseded).toBe(true);

    const row = await h.clients.prisma.slot.findUniqueOrThrow({ where: { id: slot.id } });
    expect(row.goneAt).not.toBeNull();
    expect(row.closeReason).toBe('taken');
    const reopened = await h.clients.prisma.slot.count({
      where: { connectionId, upstreamEventId: slot.upstreamEventId, startsAt: slot.startsAt, goneAt: null },
    });
    expect(reopened).toBe(0);

    const runs = await h.clients.prisma.syncRun.findMany({
      where: { connectionId },
      orderBy: { finishedAt: 'asc' },
    });
    expect(runs.map((r) => r.outcome)).toEqual(['succeeded', 'succeeded', 'superseded']);
    const connection = await h.clients.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } });
    // Not a failure: the connection stays as the newer pull left it.
    expect(connection.lastSyncOutcome).toBe('succeeded');
    expect(connection.lastSyncError).toBeNull();
  });
});
