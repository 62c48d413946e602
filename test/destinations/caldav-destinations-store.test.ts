// The destinations store on a real Postgres: the password is kept only sealed, and what is left to push is
// counted by the migration's triggers whoever writes, with a push taking off only what it carried.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CalendarTakenError,
  CaldavDestinationNotFoundError,
  createCaldavDestinationStore,
  LOG_KEPT,
  type CaldavDestinationStore,
} from '../../src/store/caldav-destinations.js';
import { createCaldavCleanupStore } from '../../src/store/caldav-cleanups.js';
import { createFeedStore, FeedNotFoundError, type FeedStore } from '../../src/store/feeds.js';
import { createTeamStore } from '../../src/store/teams.js';
import { createTokenVault, TokenVaultError, vaultKeyFromBase64 } from '../../src/store/token-vault.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

const NOW = new Date('2026-03-02T09:00:00Z');
const later = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
const PASSWORD = 'correct horse battery staple';
const idsOf = (due: readonly { id: string }[]) => due.map(({ id }) => id);

let db: TestDatabase;
let feeds: FeedStore;
let destinations: CaldavDestinationStore;
const vault = createTokenVault(vaultKeyFromBase64(randomBytes(32).toString('base64')));

async function newConnection(): Promise<string> {
  const id = randomUUID();
  await db.prisma.connection.create({ data: { id, upstreamUserId: `user-${id}`, displayName: 'Ada' } });
  return id;
}

async function newDestination(feedId: string, calendar: string = randomUUID()) {
  return destinations.create(
    {
      feedId,
      serverUrl: 'http://127.0.0.1:5232/',
      calendarUrl: `http://127.0.0.1:5232/ada/${calendar}/`,
      calendarName: 'Free time',
      credentials: { username: 'ada', password: PASSWORD },
    },
    NOW,
  );
}

/** A destination with nothing pending, as after a push that went through. */
async function settled(feedId: string, calendar?: string) {
  const destination = await newDestination(feedId, calendar);
  await destinations.pushSucceeded(destination.id, await destinations.claim(destination.id, NOW), NOW, true);
  return destinations.get(destination.id);
}

beforeAll(async () => {
  db = await createTestDatabase('caldav_destinations');
  feeds = createFeedStore(db.prisma, undefined, vault);
  destinations = createCaldavDestinationStore(db.prisma, vault);
});
afterAll(async () => {
  await db?.drop();
});

describe('a destination’s password', () => {
  it('is in no column as written, and opens for its own destination only', async () => {
    const { feed } = await feeds.create({ connectionId: await newConnection() });
    const destination = await newDestination(feed.id);

    const { rows } = await db.sql.query<{ row: string }>(
      'SELECT row_to_json(caldav_destination)::text AS row FROM caldav_destination WHERE id = $1',
      [destination.id],
    );
    expect(rows[0]!.row).not.toContain(PASSWORD);
    expect(JSON.stringify(destination)).not.toContain(PASSWORD);
    expect(await destinations.credentialsOf(destination.id)).toEqual({ username: 'ada', password: PASSWORD });

    // A sealed password copied onto another destination's row does not open there.
    const other = await newDestination(feed.id);
    await db.sql.query(
      'UPDATE caldav_destination SET password_sealed = (SELECT password_sealed FROM caldav_destination WHERE id = $1) WHERE id = $2',
      [destination.id, other.id],
    );
    await expect(destinations.credentialsOf(other.id)).rejects.toBeInstanceOf(TokenVaultError);
  });

  it('is replaced sealed, and new credentials make a destination that needed them active with a push asked for', async () => {
    const { feed } = await feeds.create({ connectionId: await newConnection() });
    const destination = await settled(feed.id);
    await destinations.pushFailed(
      destination.id,
      { state: 'needs_credentials', error: 'the server refused the credentials (401)', retryAt: null },
      later(1),
    );
    expect(idsOf(await destinations.due(later(2), NOW, 100))).not.toContain(destination.id);

    const replaced = await destinations.replaceCredentials(
      destination.id,
      { username: 'ada2', password: 'another secret' },
      later(3),
    );
    expect(replaced).toMatchObject({ state: 'active', lastError: null, pendingChanges: 1 });
    expect(await destinations.credentialsOf(destination.id)).toEqual({
      username: 'ada2',
      password: 'another secret',
    });
    // With the host its push waits in line for, so a worker can send it back before reading it.
    expect(await destinations.due(later(4), NOW, 100)).toContainEqual({
      id: destination.id,
      host: '127.0.0.1:5232',
    });
  });
});

describe('adding a destination', () => {
  it('is refused for a revoked feed, an unknown feed, and a calendar written by another destination', async () => {
    const { feed } = await feeds.create({ connectionId: await newConnection() });
    const first = await newDestination(feed.id, 'taken');
    expect(first).toMatchObject({ state: 'active', pendingChanges: 1, pendingSince: NOW });
    await expect(newDestination(feed.id, 'taken')).rejects.toBeInstanceOf(CalendarTakenError);
    await expect(newDestination(randomUUID())).rejects.toBeInstanceOf(FeedNotFoundError);
    await feeds.revoke(feed.id, NOW);
    await expect(newDestination(feed.id)).rejects.toBeInstanceOf(FeedNotFoundError);
    await expect(destinations.get('not-a-uuid')).rejects.toBeInstanceOf(CaldavDestinationNotFoundError);
  });
});

describe('what is left to push, whoever writes', () => {
  it('counts a change of what the connection’s feed shows, and not a write that changes none', async () => {
    const connectionId = await newConnection();
    const { feed } = await feeds.create({ connectionId });
    const destination = await settled(feed.id);
    expect(destination.pendingChanges).toBe(0);

    await db.sql.query('UPDATE connection SET next_sync_at = now() WHERE id = $1', [connectionId]);
    expect((await destinations.get(destination.id)).pendingChanges).toBe(0);

    // A shown column moves feed_version (its own trigger), which marks the destination.
    await db.sql.query(`UPDATE connection SET display_name = 'Ada L.' WHERE id = $1`, [connectionId]);
    const marked = await destinations.get(destination.id);
    expect(marked.pendingChanges).toBe(1);
    expect(marked.pendingSince).not.toBeNull();
    expect(idsOf(await destinations.due(later(1), NOW, 100))).toContain(destination.id);
  });

  it('counts a change of the feed’s options and its revocation', async () => {
    const { feed } = await feeds.create({ connectionId: await newConnection() });
    const destination = await settled(feed.id);
    await feeds.updateOptions(feed.id, { view: 'slots' }, later(1));
    expect((await destinations.get(destination.id)).pendingChanges).toBe(1);
    await feeds.revoke(feed.id, later(2));
    expect((await destinations.get(destination.id)).pendingChanges).toBe(2);
  });

  it('counts a team feed’s member joining and a member’s own change', async () => {
    const teams = createTeamStore(db.prisma);
    const team = await teams.create(`team-${randomUUID()}`);
    const ada = await newConnection();
    const { feed } = await feeds.createTeamFeed({ teamId: team.id });
    const destination = await settled(feed.id);

    await teams.addMembers(team.id, [ada]);
    expect((await destinations.get(destination.id)).pendingChanges).toBe(1);
    await db.sql.query(`UPDATE connection SET feed_version = feed_version + 1 WHERE id = $1`, [ada]);
    expect((await destinations.get(destination.id)).pendingChanges).toBe(2);
  });

  it('a push takes off what it carried: a change committed during it stays pending', async () => {
    const connectionId = await newConnection();
    const { feed } = await feeds.create({ connectionId });
    const destination = await newDestination(feed.id);
    const claim = await destinations.claim(destination.id, later(5));
    expect(claim.pendingChanges).toBe(1);

    await db.sql.query(`UPDATE connection SET feed_version = feed_version + 1 WHERE id = $1`, [connectionId]);
    await destinations.pushSucceeded(destination.id, claim, later(6), false);

    const after = await destinations.get(destination.id);
    expect(after).toMatchObject({ pendingChanges: 1, lastPushAt: later(6), state: 'active' });
    // Committed after the push read the feed: its lag is counted from then at the earliest.
    expect(after.pendingSince!.getTime()).toBeGreaterThanOrEqual(later(5).getTime());
  });
});

describe('a push of one write, recorded with its end in one statement', () => {
  const written = (uid: string) => ({
    uid,
    href: `/ada/${uid}.ics`,
    etag: '"1"',
    digest: 'd1',
    writtenAt: later(6),
  });
  const end = (claim: Awaited<ReturnType<CaldavDestinationStore['claim']>>) => ({
    claim,
    now: later(6),
    reconciled: false,
    logEntries: [{ kind: 'push', uid: null, message: 'pushed: 1 changed' }],
  });

  it('records the write and ends the push, as the two statements did', async () => {
    const { feed } = await feeds.create({ connectionId: await newConnection() });
    const destination = await newDestination(feed.id);
    const claim = await destinations.claim(destination.id, later(5));
    expect(await destinations.writtenAndSucceeded(destination.id, written('one'), end(claim))).toBe('active');
    expect([...(await destinations.writtenEvents(destination.id)).keys()]).toEqual(['one']);
    expect(await destinations.get(destination.id)).toMatchObject({ pendingChanges: 0, lastPushAt: later(6) });
    expect((await destinations.logOf(destination.id, 10)).map((entry) => entry.message)).toContain(
      'pushed: 1 changed',
    );
  });

  it('paused meanwhile: the write is recorded, the push is not ended, and the state says stop', async () => {
    const { feed } = await feeds.create({ connectionId: await newConnection() });
    const destination = await newDestination(feed.id);
    const claim = await destinations.claim(destination.id, later(5));
    await destinations.setPaused(destination.id, true, later(5));
    expect(await destinations.writtenAndSucceeded(destination.id, written('two'), end(claim))).toBe('paused');
    expect([...(await destinations.writtenEvents(destination.id)).keys()]).toEqual(['two']);
    const after = await destinations.get(destination.id);
    expect(after.pendingChanges).toBe(claim.pendingChanges);
    expect(after.lastPushAt).toBeNull();
    expect((await destinations.logOf(destination.id, 10)).map((entry) => entry.message)).not.toContain(
      'pushed: 1 changed',
    );
  });

  it('removed meanwhile: the write goes into the removal’s cleanup, so it is deleted with the rest', async () => {
    const { feed } = await feeds.create({ connectionId: await newConnection() });
    const destination = await newDestination(feed.id);
    const claim = await destinations.claim(destination.id, later(5));
    await destinations.retire(destination.id, { keepEvents: false, reason: 'removed', now: later(5) });
    expect(await destinations.writtenAndSucceeded(destination.id, written('three'), end(claim))).toBe('gone');
    const cleanup = await createCaldavCleanupStore(db.prisma, vault).find(destination.id);
    expect(cleanup?.events.map((event) => event.uid)).toEqual(['three']);
  });
});

describe('which destinations are due', () => {
  it('leaves out paused ones, those needing credentials and those in backoff until it ends', async () => {
    const { feed } = await feeds.create({ connectionId: await newConnection() });
    const backingOff = await newDestination(feed.id);
    await destinations.pushFailed(
      backingOff.id,
      { state: 'failing', error: 'the server asked to retry after 120 s (503)', retryAt: later(120) },
      NOW,
    );
    const paused = await newDestination(feed.id);
    await destinations.setPaused(paused.id, true, NOW);

    expect(idsOf(await destinations.due(later(60), NOW, 100))).not.toContain(backingOff.id);
    expect(idsOf(await destinations.due(later(120), NOW, 100))).toContain(backingOff.id);
    expect(idsOf(await destinations.due(later(120), NOW, 100))).not.toContain(paused.id);

    await destinations.setPaused(paused.id, false, later(1));
    expect(idsOf(await destinations.due(later(2), NOW, 100))).toContain(paused.id);
  });

  it('includes one with nothing pending when its reconciliation is due or asked for', async () => {
    const { feed } = await feeds.create({ connectionId: await newConnection() });
    const destination = await settled(feed.id);
    expect(idsOf(await destinations.due(later(60), NOW, 100))).not.toContain(destination.id);
    // Reconciled at NOW: due again once the interval has passed.
    expect(idsOf(await destinations.due(later(60), later(1), 100))).toContain(destination.id);

    await destinations.requestReconcile(destination.id, later(30));
    expect(idsOf(await destinations.due(later(60), NOW, 100))).toContain(destination.id);
    await destinations.pushSucceeded(
      destination.id,
      await destinations.claim(destination.id, later(31)),
      later(32),
      true,
    );
    expect(idsOf(await destinations.due(later(60), NOW, 100))).not.toContain(destination.id);
  });
});

describe('a calendar with a cleanup under way', () => {
  it('has no destination due until the cleanup ends, which asks the calendar’s destination to reconcile', async () => {
    const cleanups = createCaldavCleanupStore(db.prisma, vault);
    const { feed } = await feeds.create({ connectionId: await newConnection() });
    const calendar = randomUUID();
    const ended = await settled(feed.id, calendar);
    await destinations.retire(ended.id, {
      keepEvents: false,
      reason: 'the destination was removed',
      now: NOW,
    });
    const added = await settled(feed.id, calendar);
    await destinations.requestPush(added.id, NOW);
    expect(idsOf(await destinations.due(NOW, later(-3600), 100))).not.toContain(added.id);
    expect((await destinations.openPush(added.id, NOW)).awaitsCleanup).toBe(true);

    await cleanups.done(ended.id, later(5));
    expect(idsOf(await destinations.due(later(5), later(-3600), 100))).toContain(added.id);
    expect((await destinations.openPush(added.id, later(5))).awaitsCleanup).toBe(false);
    expect((await destinations.get(added.id)).reconcileRequestedAt).toEqual(later(5));
  });
});

describe('the destination’s log', () => {
  it('reads newest first, in the order each call wrote it', async () => {
    const { feed } = await feeds.create({ connectionId: await newConnection() });
    const destination = await newDestination(feed.id);
    await destinations.log(
      destination.id,
      [
        { kind: 'repair-created', uid: 'a@slotfeed', message: 'missing on the server: written again' },
        { kind: 'repair-deleted', uid: 'b@slotfeed', message: 'no longer in the feed: deleted' },
      ],
      NOW,
    );
    expect((await destinations.logOf(destination.id)).map((entry) => entry.uid)).toEqual([
      'b@slotfeed',
      'a@slotfeed',
    ]);
  });
});

describe('the log, trimmed in batches', () => {
  it('keeps each destination’s newest LOG_KEPT entries when its worker trims, and leaves other destinations’ logs alone', async () => {
    const { feed } = await feeds.create({ connectionId: await newConnection() });
    const busy = await newDestination(feed.id);
    const quietOne = await newDestination(feed.id);
    const entries = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ kind: 'push', uid: null, message: `push ${i}` }));
    await destinations.log(busy.id, entries(LOG_KEPT + 25), NOW);
    await destinations.log(quietOne.id, entries(LOG_KEPT + 5), NOW);
    // A push writes its entries without trimming: the log grows until the trim.
    expect(await destinations.logOf(busy.id, LOG_KEPT * 2)).toHaveLength(LOG_KEPT + 25);

    expect(await destinations.trimLogs([busy.id])).toBe(25);
    const kept = await destinations.logOf(busy.id, LOG_KEPT * 2);
    expect(kept).toHaveLength(LOG_KEPT);
    expect(kept[0]!.message).toBe(`push ${LOG_KEPT + 24}`);
    expect(kept.at(-1)!.message).toBe('push 25');
    expect(await destinations.logOf(quietOne.id, LOG_KEPT * 2)).toHaveLength(LOG_KEPT + 5);
  });
});
