// Two members of one team commit syncs at the same time, both writing to the team's webhook endpoint. Each
// commit numbers its deliveries in the endpoint's sequence, which locks the endpoint's row until it commits:
// taken as the commit's last statement, that lock is held for an instant, so one member's commit never waits
// out the rest of another's (before, it waited for everything the other did after its outbox write, and a
// slow one made it fail after SYNC_LOCK_TIMEOUT_MS). The numbers stay 1, 2, 3, … in commit order, none skipped.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { commitSuccessfulSync, type SnapshotInput } from '../../src/store/snapshots.js';
import type { FetchedSlot } from '../../src/store/slot-diff.js';
import { createTeamStore } from '../../src/store/teams.js';
import { createSyncHarness, type FakeClock, type SyncHarness } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { patient } from '../support/patience.js';

let h: SyncHarness;
const members: string[] = [];
let endpointId: string;
const clock = () => h.clock as FakeClock;
const HOUR_MS = 3_600_000;

/** Four half-hour slots tomorrow from 09:00 UTC, without those `taken`. */
function slots(taken: number[] = []): FetchedSlot[] {
  const day = Date.parse('2026-03-03T09:00:00Z');
  return [0, 1, 2, 3]
    .filter((i) => !taken.includes(i))
    .map((i) => ({
      eventId: 'evt_team',
      startsAt: new Date(day + i * HOUR_MS),
      endsAt: new Date(day + i * HOUR_MS + HOUR_MS / 2),
    }));
}

const snapshotOf = (open: FetchedSlot[]): SnapshotInput => ({
  profile: { payload: {}, email: 'member@example.test', name: 'Member', timezone: 'UTC' },
  eventTypes: [
    {
      upstreamEventId: 'evt_team',
      title: 'Call',
      durationMinutes: 30,
      enabled: true,
      secret: false,
      url: null,
      color: null,
      payload: { event_id: 'evt_team' },
    },
  ],
  overviews: [],
  slots: open,
});

function commit(prisma: PrismaClient, connectionId: string, open: FetchedSlot[], runId = randomUUID()) {
  const now = clock().now();
  return commitSuccessfulSync(prisma, {
    connectionId,
    snapshot: snapshotOf(open),
    run: {
      id: runId,
      jobId: null,
      attempt: 1,
      startedAt: new Date(now.getTime() - 1000),
      callsByEndpoint: {},
    },
    now,
    next: new Date(now.getTime() + HOUR_MS),
  });
}

beforeAll(async () => {
  h = await createSyncHarness('webhook_team_sequences', {
    // How long a sync's statement waits for a lock before its commit fails (the job retries).
    env: { SYNC_LOCK_TIMEOUT_MS: '5000', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
  });
  const prisma = h.clients.syncPrisma;
  for (const name of ['a', 'b', 'bystander']) {
    const made = await prisma.connection.create({
      data: { upstreamUserId: `usr_${name}_${randomUUID()}`, email: `${name}@example.test`, timezone: 'UTC' },
    });
    members.push(made.id);
  }
  // The members' first syncs, before the endpoint exists: its sequence starts with the commits below.
  for (const id of members.slice(0, 2)) await commit(prisma, id, slots());
  const teams = createTeamStore(prisma);
  const team = await teams.create('Sequenced team');
  await teams.addMembers(team.id, members.slice(0, 2));
  // Nothing delivers in this file (no worker role runs): the rows stay in the outbox.
  const made = await h.stores.webhooks.create({
    owner: { teamId: team.id },
    url: 'http://127.0.0.1:9/hook',
  });
  endpointId = made.endpoint.id;
}, patient(60_000));
afterAll(async () => {
  await h?.close();
});

const sequencesOf = async (connectionId: string) =>
  (
    await h.clients.prisma.webhookDelivery.findMany({
      where: { endpointId, payload: { path: ['data', 'connectionId'], equals: connectionId } },
    })
  )
    .map((row) => (row.payload as { sequence: number }).sequence)
    .sort((x, y) => x - y);

it(
  'two members commit at once: the second is not held behind the first, and the sequence follows the commit order',
  async () => {
    const [a, b, bystander] = members as [string, string, string];
    const runA = randomUUID();
    // Member a's commit is slow after its changes are written: its run row waits behind another transaction that
    // holds the same id (any slow statement late in a commit does the same).
    const blocker = await h.db.sql.connect();
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await blocker.query('ROLLBACK');
      blocker.release();
    };
    try {
      await blocker.query('BEGIN');
      await blocker.query(`INSERT INTO sync_run (id, connection_id, outcome) VALUES ($1, $2, 'failed')`, [
        runA,
        bystander,
      ]);
      // A pool without a lock timeout: a's commit waits for as long as the test holds it.
      const slowA = commit(h.db.prisma, a, slots([0]), runA);
      const outcomeA = slowA.then(
        (changes) => ({ ok: true as const, changes }),
        (error: unknown) => ({ ok: false as const, error: String(error) }),
      );
      await waitFor(
        async () =>
          (
            await h.db.sql.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock'`,
            )
          ).rows[0]!.n,
        (n) => n >= 1,
        { what: 'member a’s commit waiting on its run row' },
      );

      // Member b commits meanwhile, on the sync workers' pool (SYNC_LOCK_TIMEOUT_MS).
      const outcomeB = await commit(h.clients.syncPrisma, b, slots([1])).then(
        (changes) => ({ ok: true as const, webhookDeliveries: changes.webhookDeliveries }),
        (error: unknown) => ({ ok: false as const, error: String(error) }),
      );
      expect(outcomeB).toEqual({ ok: true, webhookDeliveries: expect.any(Number) });

      await release();
      expect(await outcomeA).toMatchObject({ ok: true });
    } finally {
      await release();
    }

    // b committed first, then a: b's deliveries have the first numbers, a's the next, none skipped.
    const ofB = await sequencesOf(b);
    const ofA = await sequencesOf(a);
    expect(ofB.length).toBeGreaterThan(0);
    expect(ofA.length).toBeGreaterThan(0);
    expect([...ofB, ...ofA]).toEqual([...ofB, ...ofA].map((_, i) => i + 1));
    const endpoint = await h.clients.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpointId } });
    expect(Number(endpoint.lastSequence)).toBe(ofB.length + ofA.length);
  },
  patient(60_000),
);

it(
  'many commits of both members at once: every one succeeds and the numbers go on 1…n, none skipped',
  async () => {
    const [a, b] = members as [string, string];
    const lastSequence = async () =>
      Number(
        (await h.clients.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: endpointId } }))
          .lastSequence,
      );
    const before = await lastSequence();
    const rounds = [[2], [], [3], [0, 1]];
    await Promise.all(
      rounds.flatMap((taken) => [
        commit(h.clients.syncPrisma, a, slots(taken)),
        commit(h.clients.syncPrisma, b, slots(taken)),
      ]),
    );
    const later = (await h.clients.prisma.webhookDelivery.findMany({ where: { endpointId } }))
      .map((row) => (row.payload as { sequence: number }).sequence)
      .filter((sequence) => sequence > before)
      .sort((x, y) => x - y);
    expect(later.length).toBeGreaterThan(0);
    expect(later).toEqual(later.map((_, i) => before + i + 1));
    expect(await lastSequence()).toBe(before + later.length);
  },
  patient(60_000),
);
