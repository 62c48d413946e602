// Every model can be written and read back through the generated client on a migrated database, with every
// field set: column types, precisions and enum values agree with what the client sends and expects.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, MIGRATIONS_DIR, type TestDatabase } from '../support/db.js';
import { loadDatamodel, type Datamodel } from './helpers/load-dmmf.js';

const T0 = Date.parse('2026-03-02T09:00:00Z');
/** Reference instant + minutes, with milliseconds, which TIMESTAMPTZ(3) must keep. */
const at = (minutes: number) => new Date(T0 + minutes * 60_000 + 123);

const CONNECTION_ID = '0b6c5f3e-2a4d-4c1e-9f7a-1d2e3f4a5b6c';

let db: TestDatabase;
let datamodel: Datamodel;

beforeAll(async () => {
  db = await createTestDatabase('client_round_trip');
  datamodel = await loadDatamodel(path.resolve(MIGRATIONS_DIR, '..', 'schema.prisma'));
  // The parent of every other model's row.
  await db.prisma.connection.create({ data: connection });
});

afterAll(async () => {
  await db?.drop();
});

/** Guards "every field set": the fixture must name every scalar field the schema has (autoincrement ids aside). */
function expectEveryField(model: string, data: object) {
  const fields = datamodel.models
    .find((m) => m.name === model)
    ?.fields.filter((f) => (f.kind === 'scalar' || f.kind === 'enum') && !isAutoincrement(f.default))
    .map((f) => f.name)
    .sort();
  expect(Object.keys(data).sort()).toEqual(fields);
}

function isAutoincrement(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { name?: string }).name === 'autoincrement';
}

const connection = {
  id: CONNECTION_ID,
  upstreamUserId: 'calendbook|user-1',
  email: 'ada@example.test',
  displayName: 'Ada Lovelace',
  timezone: 'Europe/Berlin',
  status: 'needs_reauth' as const,
  accessTokenSealed: 'v1.k1.iv.tag.ciphertext-a',
  refreshTokenSealed: 'v1.k1.iv.tag.ciphertext-r',
  accessExpiresAt: at(60),
  scope: 'read write',
  feedVersion: 7,
  feedChangedAt: new Date('2026-03-02T08:45:00.000Z'),
  nextSyncAt: at(5),
  bandState: { 'days 0-2': { dueAt: '2026-03-02T09:05:00.000Z', factor: 0.5, calls: 9 } },
  pullCoverage: {
    eventTypesPulledAt: '2026-03-02T08:30:00.000Z',
    slotStarts: [
      { until: '2026-03-05T23:00:00.000Z', pulledAt: '2026-03-02T08:30:00.000Z' },
      { until: null, pulledAt: '2026-03-02T07:00:00.000Z' },
    ],
  },
  lastSyncAt: at(-1),
  lastSyncOutcome: 'failed' as const,
  lastSyncError: 'upstream_unavailable',
  firstSyncedAt: at(-500),
  lastGoodSyncAt: at(-30),
  pullSequence: 12,
  committedPullSequence: 11,
  createdAt: at(-600),
  updatedAt: at(-2),
};

describe('through the generated client, with every field set', () => {
  it('Connection', async () => {
    expectEveryField('Connection', connection);
    expect(await db.prisma.connection.findUniqueOrThrow({ where: { id: CONNECTION_ID } })).toEqual(
      connection,
    );
  });

  it('SyncRun', async () => {
    const data = {
      id: '7f1e2d3c-4b5a-4968-8776-655443322110',
      connectionId: CONNECTION_ID,
      jobId: 'sync:0b6c5f3e',
      attempt: 3,
      startedAt: at(-1),
      finishedAt: at(0),
      outcome: 'succeeded' as const,
      errorCode: 'rate_limited',
      errorMessage: 'Retry-After 30',
      retryAt: at(1),
      upstreamCalls: 14,
      callsByEndpoint: { 'GET /events': 1, 'GET /calendars/{id}/slots': 12 },
      bands: ['days 0-2', 'days 7+'],
      changesByBand: { '0-24h': 2, '7d+': 1 },
      stalenessBoundSeconds: 612.5,
      changeStaleness: [
        { band: '0-24h', boundSeconds: 600, changes: 2 },
        { band: '7d+', boundSeconds: 612.5, changes: 1 },
      ],
      slotsOpened: 5,
      slotsClosed: 2,
      eventTypesChanged: 1,
      overviewsChanged: 1,
      profileChanged: true,
      // Postgres sets it to the writing transaction's id; a value given is kept.
      recordedXid: 4_000_000_123n,
    };
    expectEveryField('SyncRun', data);
    await db.prisma.syncRun.create({ data });
    expect(await db.prisma.syncRun.findUniqueOrThrow({ where: { id: data.id } })).toEqual(data);
  });

  it('EventType', async () => {
    const data = {
      connectionId: CONNECTION_ID,
      upstreamEventId: 'evt-30min',
      title: 'Intro call',
      durationMinutes: 30,
      enabled: true,
      secret: true,
      url: 'https://calendbook.test/ada/intro',
      color: '#3366ff',
      contentHash: 'sha256:abc',
      payload: { event_id: 'evt-30min', location: { type: 'video', value: 'link' }, is_secret: false },
      validFrom: at(-10),
      validTo: at(-5),
    };
    expectEveryField('EventType', data);
    const { id } = await db.prisma.eventType.create({ data });
    expect(typeof id).toBe('bigint');
    expect(await db.prisma.eventType.findUniqueOrThrow({ where: { id } })).toEqual({ id, ...data });
  });

  it('Profile', async () => {
    const data = {
      connectionId: CONNECTION_ID,
      contentHash: 'sha256:def',
      payload: { name: 'Ada', notification_settings: { pending_actions: 'email' } },
      validFrom: at(-10),
      validTo: null,
    };
    expectEveryField('Profile', data);
    const { id } = await db.prisma.profile.create({ data });
    expect(await db.prisma.profile.findUniqueOrThrow({ where: { id } })).toEqual({ id, ...data });
  });

  it('Overview', async () => {
    const data = {
      connectionId: CONNECTION_ID,
      upstreamEventId: 'evt-30min',
      band: 'days 3-6',
      contentHash: 'sha256:123',
      payload: [{ timezone: 'Europe/Berlin', availability: { available_dates: ['2026-03-03'] } }],
      validFrom: at(-10),
      validTo: at(-9),
    };
    expectEveryField('Overview', data);
    const { id } = await db.prisma.overview.create({ data });
    expect(await db.prisma.overview.findUniqueOrThrow({ where: { id } })).toEqual({ id, ...data });
  });

  it('Slot', async () => {
    const data = {
      connectionId: CONNECTION_ID,
      upstreamEventId: 'evt-30min',
      startsAt: at(24 * 60),
      endsAt: at(24 * 60 + 30),
      sequence: 2,
      firstSeenAt: at(-100),
      lastChangedAt: at(-50),
      goneAt: at(-1),
      closeReason: 'taken' as const,
    };
    expectEveryField('Slot', data);
    const { id } = await db.prisma.slot.create({ data });
    expect(await db.prisma.slot.findUniqueOrThrow({ where: { id } })).toEqual({ id, ...data });
  });

  it('Feed', async () => {
    const data = {
      id: '9a8b7c6d-5e4f-4321-8fed-cba987654321',
      connectionId: CONNECTION_ID,
      teamId: null,
      upstreamEventId: 'evt-30min',
      label: 'Intro calls, next 14 days',
      tokenHash: new Uint8Array(Array.from({ length: 32 }, (_, i) => (i * 37) % 256)),
      tokenSealed: 'v1.0123456789ab.iv.tag.ciphertext',
      options: { days: 14, merge: true },
      createdAt: at(-20),
      inputsChangedAt: at(-10),
      labelChangedAt: at(-9),
      revokedAt: at(-3),
    };
    expectEveryField('Feed', data);
    await db.prisma.feed.create({ data });
    expect(await db.prisma.feed.findUniqueOrThrow({ where: { id: data.id } })).toEqual(data);

    const event = {
      feedId: data.id,
      uid: '0123456789abcdef0123456789abcdef@slotfeed',
      digest: 'AAECAwQFBgcICQoLDA0ODw',
      sequence: 4,
      changedAt: at(-4),
      endsAt: at(90),
    };
    expectEveryField('FeedEvent', event);
    await db.prisma.feedEvent.create({ data: event });
    expect(
      await db.prisma.feedEvent.findUniqueOrThrow({
        where: { feedId_uid: { feedId: data.id, uid: event.uid } },
      }),
    ).toEqual(event);
  });

  it('Team, TeamMember, and a Feed of the team', async () => {
    const team = {
      id: '2c1b0a99-8877-4665-9544-332211009988',
      name: 'Design',
      createdAt: at(-30),
      membersChangedAt: at(-30),
    };
    expectEveryField('Team', team);
    await db.prisma.team.create({ data: team });
    const member = { teamId: team.id, connectionId: CONNECTION_ID, joinedAt: at(-29) };
    expectEveryField('TeamMember', member);
    await db.prisma.teamMember.create({ data: member });
    expect(
      await db.prisma.teamMember.findUniqueOrThrow({
        where: { teamId_connectionId: { teamId: team.id, connectionId: CONNECTION_ID } },
      }),
    ).toEqual(member);
    // The membership trigger moved the team's membersChangedAt (to the transaction's time, after at(-30)).
    const stored = await db.prisma.team.findUniqueOrThrow({ where: { id: team.id } });
    expect({ ...stored, membersChangedAt: team.membersChangedAt }).toEqual(team);
    expect(stored.membersChangedAt.getTime()).toBeGreaterThan(team.membersChangedAt.getTime());

    const feed = {
      id: '3d2c1b0a-9988-4776-8655-443322110099',
      connectionId: null,
      teamId: team.id,
      upstreamEventId: null,
      label: 'Design, all free',
      tokenHash: new Uint8Array(Array.from({ length: 32 }, (_, i) => (i * 41) % 256)),
      tokenSealed: null,
      options: { mode: 'all', minimum: 45 },
      createdAt: at(-20),
      inputsChangedAt: null,
      labelChangedAt: null,
      revokedAt: null,
    };
    await db.prisma.feed.create({ data: feed });
    expect(await db.prisma.feed.findUniqueOrThrow({ where: { id: feed.id } })).toEqual(feed);
    // A feed belongs to exactly one of a connection and a team.
    await expect(
      db.prisma.feed.create({
        data: {
          ...feed,
          id: '4e3d2c1b-0a99-4887-8766-554433221100',
          connectionId: CONNECTION_ID,
          tokenHash: new Uint8Array(32),
        },
      }),
    ).rejects.toThrow(/feed_belongs_to_one/);
  });

  it('Booking', async () => {
    const data = {
      connectionId: CONNECTION_ID,
      detectedAt: at(-10),
      startsAt: at(120),
      endsAt: at(150),
      eventIds: ['evt-30min', 'evt-60min'],
      slotsClosed: 3,
    };
    expectEveryField('Booking', data);
    const { id } = await db.prisma.booking.create({ data });
    expect(await db.prisma.booking.findUniqueOrThrow({ where: { id } })).toEqual({ id, ...data });
  });
});

it('keeps at most one open row per slot, but any number of closed ones (slot_open_key)', async () => {
  const slot = {
    connectionId: CONNECTION_ID,
    upstreamEventId: 'evt-60min',
    startsAt: at(2000),
    endsAt: at(2060),
  };
  await db.prisma.slot.create({ data: { ...slot, goneAt: at(0) } });
  await db.prisma.slot.create({ data: { ...slot, goneAt: at(1) } });
  await db.prisma.slot.create({ data: slot });
  await expect(db.prisma.slot.create({ data: slot })).rejects.toMatchObject({ code: 'P2002' });
  expect(await db.prisma.slot.count({ where: { upstreamEventId: 'evt-60min' } })).toBe(3);
});
