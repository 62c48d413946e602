// The promise of issue 34 as a property: whatever the order in which feed changes, pushes, reconciliations,
// pauses, removals, deletions of the connection, cleanups and the person's own edits, copies and deletions reach
// the calendar, once things settle the calendar holds exactly the feed's events, each once (or none of slotfeed's
// after a removal or deletion), and every event the person made, unchanged. fast-check's scheduler decides the
// order in which each request reaches an in-memory calendar (helpers/memory-calendar.ts: CalDAV's conditional
// semantics, exactly); everything else is slotfeed's own code on a real Postgres: the push, the removal and its
// trigger-made cleanup, the cleanup worker, each write's record and the state it answers with. A push and a
// cleanup of one destination never run at once, as the caldav queue's per-destination lock makes sure.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readEventIdentity } from '../../src/caldav/event-marker.js';
import {
  createCaldavDestinations,
  type CaldavDestinations,
} from '../../src/destinations/caldav-destinations-service.js';
import type { CalendarAccount } from '../../src/destinations/calendar-port.js';
import { cleanUpDestination, type CleanUpDeps } from '../../src/destinations/clean-up.js';
import { eventObjects, type EventObject } from '../../src/destinations/event-objects.js';
import { eventProofs } from '../../src/destinations/event-proofs.js';
import { pushDestination, type PushDeps } from '../../src/destinations/push-destination.js';
import { createCaldavCleanupStore, type CaldavCleanupStore } from '../../src/store/caldav-cleanups.js';
import {
  createCaldavDestinationStore,
  type CaldavDestinationStore,
} from '../../src/store/caldav-destinations.js';
import { createFeedStore, type FeedStore } from '../../src/store/feeds.js';
import { createTokenVault, vaultKeyFromBase64 } from '../../src/store/token-vault.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { memoryCalendar, type MemoryCalendar } from './helpers/memory-calendar.js';
import { patient } from '../support/patience.js';

const NOW = new Date('2026-03-02T09:00:00Z');
const UIDS = ['block-a', 'block-b', 'block-c', 'block-d', 'block-e'];
const quiet = { info: () => undefined, warn: () => undefined };
const noMetric = { inc: () => undefined, observe: () => undefined };

let db: TestDatabase;
let feeds: FeedStore;
let destinations: CaldavDestinationStore;
let cleanups: CaldavCleanupStore;
const vault = createTokenVault(vaultKeyFromBase64(randomBytes(32).toString('base64')));
const proofs = eventProofs(vault);

/** The feed as slotfeed renders it: one VEVENT per shown block, at the block's version. */
function feedObjects(feedId: string, shown: ReadonlyMap<string, number>): EventObject[] {
  const lines = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//slotfeed//slotfeed//EN'];
  for (const [uid, version] of [...shown].sort()) {
    const day = 3 + UIDS.indexOf(uid);
    lines.push(
      'BEGIN:VEVENT',
      `UID:${uid}`,
      'DTSTAMP:20260302T090000Z',
      `DTSTART:202603${String(day).padStart(2, '0')}T090000Z`,
      `DTEND:202603${String(day).padStart(2, '0')}T${String(10 + version).padStart(2, '0')}0000Z`,
      `SUMMARY:Free (version ${version})`,
      'END:VEVENT',
    );
  }
  lines.push('END:VCALENDAR', '');
  return eventObjects(lines.join('\r\n'), feedId, proofs);
}

type Gate = <T>(label: string, request: () => T) => Promise<T>;
const immediately: Gate = async (_label, request) => request();

type Command =
  | { kind: 'change'; shown: [string, number][] }
  | { kind: 'push' }
  | { kind: 'reconcile' }
  | { kind: 'pause' }
  | { kind: 'resume' }
  | { kind: 'remove' }
  | { kind: 'delete-connection' }
  | { kind: 'cleanup' }
  | { kind: 'person-adds' }
  | { kind: 'person-copies'; pick: number }
  | { kind: 'person-edits'; pick: number }
  | { kind: 'person-deletes'; pick: number };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    kind: fc.constant('change' as const),
    shown: fc.uniqueArray(fc.tuple(fc.constantFrom(...UIDS), fc.integer({ min: 1, max: 4 })), {
      selector: ([uid]) => uid,
      maxLength: UIDS.length,
    }),
  }),
  fc.constant({ kind: 'push' as const }),
  fc.constant({ kind: 'push' as const }),
  fc.constant({ kind: 'reconcile' as const }),
  fc.constant({ kind: 'pause' as const }),
  fc.constant({ kind: 'resume' as const }),
  fc.constant({ kind: 'remove' as const }),
  fc.constant({ kind: 'delete-connection' as const }),
  fc.constant({ kind: 'cleanup' as const }),
  fc.constant({ kind: 'person-adds' as const }),
  fc.record({ kind: fc.constant('person-copies' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('person-edits' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('person-deletes' as const), pick: fc.nat() }),
);

/** One destination's world: its connection, feed, calendar and what the person made there. */
interface World {
  connectionId: string;
  feedId: string;
  destinationId: string;
  calendar: MemoryCalendar;
  shown: Map<string, number>;
  /** Events the person made (their own, and copies of slotfeed's), by href: each must end as it was made. */
  personMade: Map<string, string>;
  push: PushDeps;
  cleanUp: CleanUpDeps;
  service: CaldavDestinations;
  /** Every request to the calendar passes it: fast-check's scheduler while the commands run, none after. */
  gate: Gate;
  /** The account slotfeed's requests go through: the calendar behind `gate`. */
  account: CalendarAccount;
  /** The caldav queue's per-destination lock: a push and a cleanup one after the other. */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
}

async function newWorld(initial: [string, number][]): Promise<World> {
  const connectionId = randomUUID();
  await db.prisma.connection.create({ data: { id: connectionId, upstreamUserId: `u-${connectionId}` } });
  const { feed } = await feeds.create({ connectionId });
  const calendar = memoryCalendar(`https://caldav.example.com/ada/${randomUUID()}/`);
  const destination = await destinations.create(
    {
      feedId: feed.id,
      serverUrl: 'https://caldav.example.com/',
      calendarUrl: calendar.url,
      calendarName: 'Free time',
      credentials: { username: 'ada', password: 'app-password' },
    },
    NOW,
  );
  let chain: Promise<unknown> = Promise.resolve();
  const world: World = {
    connectionId,
    feedId: feed.id,
    destinationId: destination.id,
    calendar,
    shown: new Map(initial),
    personMade: new Map(),
    gate: immediately,
    account: calendar.account((label, request) => world.gate(label, request)),
    exclusive(work) {
      const turn = chain.then(work, work);
      chain = turn.catch(() => undefined);
      return turn;
    },
  } as World;
  const openAccount = async () => world.account;
  world.push = {
    destinations,
    openAccount,
    feedEvents: async (feedId) => feedObjects(feedId, world.shown),
    proofs,
    reconcileIntervalMs: 3 * 3600_000,
    now: () => NOW,
    metrics: { caldavPushes: noMetric, caldavFailures: noMetric, caldavPushLagSeconds: noMetric } as never,
    logger: quiet,
  };
  world.cleanUp = { cleanups, openAccount, proofs, now: () => NOW, logger: quiet };
  world.service = createCaldavDestinations({
    destinations,
    cleanups,
    feeds,
    openAccount,
    enqueue: async () => undefined,
    enqueueCleanup: async () => undefined,
    now: () => NOW,
  });
  return world;
}

const ignoreGone = (error: unknown) => {
  if (error instanceof Error && /NotFound|no CalDAV/.test(`${error.name} ${error.message}`)) return;
  throw error;
};

/** slotfeed's own events in the calendar (marker of this feed and a proof that fits), by UID. */
function slotfeedsIn(world: World): Map<string, string[]> {
  const byUid = new Map<string, string[]>();
  for (const object of world.calendar.objects()) {
    const identity = readEventIdentity(object.icalendar);
    if (identity?.feedId !== world.feedId || !proofs.fits(world.feedId, identity.uid, identity.proof))
      continue;
    byUid.set(identity.uid, [...(byUid.get(identity.uid) ?? []), object.icalendar]);
  }
  return byUid;
}

async function run(world: World, command: Command, personCount: { n: number }): Promise<void> {
  const { calendar } = world;
  /** A request the person's own app makes, through the same gate as slotfeed's. */
  const asPerson = (label: string, request: () => void) => world.gate(label, request);
  const ours = () =>
    calendar.objects().filter((object) => readEventIdentity(object.icalendar)?.feedId === world.feedId);
  switch (command.kind) {
    case 'change':
      world.shown = new Map(command.shown);
      await destinations.requestPush(world.destinationId, NOW).catch(ignoreGone);
      return;
    case 'push':
      await world.exclusive(() => pushDestination(world.push, world.destinationId));
      return;
    case 'reconcile':
      await destinations.requestReconcile(world.destinationId, NOW).catch(ignoreGone);
      await world.exclusive(() => pushDestination(world.push, world.destinationId));
      return;
    case 'pause':
      await world.service.setPaused(world.destinationId, true).catch(ignoreGone);
      return;
    case 'resume':
      await destinations.setPaused(world.destinationId, false, NOW).catch(ignoreGone);
      return;
    case 'remove':
      await world.service.remove(world.destinationId).catch(ignoreGone);
      return;
    case 'delete-connection':
      await db.prisma.connection.deleteMany({ where: { id: world.connectionId } });
      return;
    case 'cleanup':
      await world.exclusive(() => cleanUpDestination(world.cleanUp, world.destinationId));
      return;
    case 'person-adds': {
      personCount.n += 1;
      const uid = `own-${personCount.n}`;
      const text = `BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//app//EN\r\nBEGIN:VEVENT\r\nUID:${uid}\r\nDTSTAMP:20260302T090000Z\r\nDTSTART:20260304T120000Z\r\nDTEND:20260304T130000Z\r\nSUMMARY:Lunch\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n`;
      await asPerson(`person adds ${uid}`, () => {
        const made = calendar.put(`${calendar.url}${uid}.ics`, text);
        world.personMade.set(made.href, made.icalendar);
      });
      return;
    }
    case 'person-copies': {
      personCount.n += 1;
      const uid = `copy-${personCount.n}`;
      await asPerson(`person copies to ${uid}`, () => {
        const original = ours()[command.pick % Math.max(1, ours().length)];
        if (!original) return;
        // As an app duplicates: a UID and title of its own, the rest (the marker and proof too) kept.
        const text = original.icalendar
          .replace(/\r?\n[ \t]/g, '')
          .replace(/^UID:.*$/m, `UID:${uid}`)
          .replace(/^SUMMARY:.*$/m, 'SUMMARY:Coffee with Sam');
        const made = calendar.put(`${calendar.url}${uid}.ics`, text);
        world.personMade.set(made.href, made.icalendar);
      });
      return;
    }
    case 'person-edits':
      await asPerson('person edits one of slotfeed’s', () => {
        const target = ours().filter((o) => !world.personMade.has(o.href))[command.pick % 7];
        if (target) calendar.put(target.href, target.icalendar.replace(/^SUMMARY:.*$/m, 'SUMMARY:Mine now'));
      });
      return;
    case 'person-deletes':
      await asPerson('person deletes one of slotfeed’s', () => {
        const target = ours().filter((o) => !world.personMade.has(o.href))[command.pick % 7];
        if (target) calendar.remove(target.href);
      });
      return;
  }
}

/** What a worker does once things are quiet: push (and reconcile) an active destination, or finish a cleanup. */
async function settle(world: World): Promise<'kept' | 'ended'> {
  world.gate = immediately;
  const exists = await destinations.get(world.destinationId).then(
    () => true,
    () => false,
  );
  if (!exists) {
    for (let round = 0; round < 3; round++) await cleanUpDestination(world.cleanUp, world.destinationId);
    return 'ended';
  }
  await destinations.setPaused(world.destinationId, false, NOW);
  await destinations.requestReconcile(world.destinationId, NOW);
  await pushDestination(world.push, world.destinationId);
  await pushDestination(world.push, world.destinationId);
  return 'kept';
}

beforeAll(async () => {
  db = await createTestDatabase('caldav_interleavings');
  feeds = createFeedStore(db.prisma, undefined, vault);
  destinations = createCaldavDestinationStore(db.prisma, vault);
  cleanups = createCaldavCleanupStore(db.prisma, vault);
});
afterAll(async () => {
  await db?.drop();
});

describe('CalDAV push under any interleaving of feed changes, pushes, removals and the person’s own edits', () => {
  it(
    'ends with exactly the feed’s events once (none after a removal or deletion), and the person’s events as they made them',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.scheduler(),
          fc
            .array(fc.tuple(fc.constantFrom(...UIDS), fc.integer({ min: 1, max: 4 })), {
              minLength: 1,
              maxLength: UIDS.length,
            })
            .map((pairs) => [...new Map(pairs)]),
          fc.array(commandArb, { minLength: 1, maxLength: 10 }),
          async (s, initial, commands) => {
            const world = await newWorld(initial);
            // The first push, as adding the destination does, before anything else happens.
            await pushDestination(world.push, world.destinationId);
            world.gate = (label, request) => s.schedule(Promise.resolve(label), label).then(request);

            const personCount = { n: 0 };
            await s.waitFor(Promise.all(commands.map((command) => run(world, command, personCount))));
            const outcome = await settle(world);

            const slotfeeds = slotfeedsIn(world);
            if (outcome === 'ended') {
              expect([...slotfeeds.keys()]).toEqual([]);
            } else {
              const expected = feedObjects(world.feedId, world.shown);
              expect(new Map([...slotfeeds].map(([uid, texts]) => [uid, texts]))).toEqual(
                new Map(expected.map((event) => [event.uid, [event.icalendar]])),
              );
            }
            const stillThere = new Map(world.calendar.objects().map((o) => [o.href, o.icalendar]));
            for (const [href, text] of world.personMade) expect(stillThere.get(href)).toBe(text);
          },
        ),
        { numRuns: 50 },
      );
    },
    patient(20_000),
  );
});
