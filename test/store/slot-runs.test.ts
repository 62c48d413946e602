// The slots a window's edges ask for (issue 41, finding 9), read from Postgres: a run of slots that starts in
// the window and runs on is read to its end, over several days (free day and night) and through a slot without
// a valid end (it lasts its event type's duration), but never past the days a reader may see; the slot just
// before the window that runs into it is read; a slot after a gap is not.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createFeedContentStore } from '../../src/store/feed-content.js';
import type { SlotRunEdges } from '../../src/store/slot-runs.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

const HOUR = 3_600_000;
const at = (iso: string) => new Date(iso);
const connectionId = randomUUID();
let db: TestDatabase;

async function slot(start: string, hours: number) {
  const startsAt = at(start);
  await db.prisma.slot.create({
    data: {
      connectionId,
      upstreamEventId: 'ev',
      startsAt,
      endsAt: new Date(startsAt.getTime() + hours * HOUR),
      sequence: 0,
      firstSeenAt: at('2026-03-01T00:00:00Z'),
      lastChangedAt: at('2026-03-01T00:00:00Z'),
    },
  });
}

beforeAll(async () => {
  db = await createTestDatabase('slot_runs');
  await db.prisma.connection.create({ data: { id: connectionId, upstreamUserId: 'u', timezone: 'UTC' } });
  await db.prisma.eventType.create({
    data: {
      connectionId,
      upstreamEventId: 'ev',
      title: 'Hour',
      durationMinutes: 60,
      enabled: true,
      url: null,
      color: null,
      contentHash: 'ev',
      payload: {},
      validFrom: at('2026-03-01T00:00:00Z'),
    },
  });
  // Free from Monday 20:00 to Thursday 05:00, hour by hour, with a slot without an end at 03:00 (04:00 by its
  // duration, so the 04:00 slot joins the run), then a gap and one more slot.
  for (let t = at('2026-03-02T20:00:00Z').getTime(); t < at('2026-03-05T03:00:00Z').getTime(); t += HOUR) {
    await slot(new Date(t).toISOString(), 1);
  }
  await slot('2026-03-05T03:00:00Z', 0);
  await slot('2026-03-05T04:00:00Z', 1);
  await slot('2026-03-05T06:00:00Z', 1);
});
afterAll(async () => {
  await db?.drop();
});

async function around(windowStart: string, windowEnd: string, edges: SlotRunEdges) {
  const content = await createFeedContentStore(db.prisma).forConnection(
    { connectionId, upstreamEventId: null, withBookings: false },
    () => ({ windowStart: at(windowStart), windowEnd: at(windowEnd), edges }),
  );
  return content.slotsAround.map((s) => s.startsAt.toISOString());
}

const hourly = (from: string, to: string) => {
  const starts: string[] = [];
  for (let t = at(from).getTime(); t < at(to).getTime(); t += HOUR) starts.push(new Date(t).toISOString());
  return starts;
};

describe('a window’s edges', () => {
  it('read a run that starts in the window to its end, days on, through a slot without an end', async () => {
    const slots = await around('2026-03-02T00:00:00Z', '2026-03-03T00:00:00Z', {
      from: at('2026-03-02T00:00:00Z'),
      until: null,
    });
    expect(slots).toEqual([
      ...hourly('2026-03-03T00:00:00Z', '2026-03-05T03:00:00Z'),
      '2026-03-05T03:00:00.000Z',
      '2026-03-05T04:00:00.000Z',
    ]);
  });

  it('never read past the days a reader may see', async () => {
    const slots = await around('2026-03-02T00:00:00Z', '2026-03-03T00:00:00Z', {
      from: at('2026-03-02T00:00:00Z'),
      until: at('2026-03-04T00:00:00Z'),
    });
    expect(slots).toEqual(hourly('2026-03-03T00:00:00Z', '2026-03-04T00:00:00Z'));
  });

  it('read the slot before the window that runs into it, unless the window starts where the days do', async () => {
    const edges = { from: at('2026-03-01T00:00:00Z'), until: at('2026-03-04T00:00:00Z') };
    expect(await around('2026-03-04T00:00:00Z', '2026-03-04T01:00:00Z', { ...edges, until: null })).toEqual([
      '2026-03-03T23:00:00.000Z',
      ...hourly('2026-03-04T01:00:00Z', '2026-03-05T03:00:00Z'),
      '2026-03-05T03:00:00.000Z',
      '2026-03-05T04:00:00.000Z',
    ]);
    expect(
      await around('2026-03-03T12:00:00Z', '2026-03-03T13:00:00Z', {
        from: at('2026-03-03T12:00:00Z'),
        until: at('2026-03-03T14:00:00Z'),
      }),
    ).toEqual(['2026-03-03T13:00:00.000Z']);
  });

  it('read nothing past a gap, nor for a window whose runs end inside it', async () => {
    expect(
      await around('2026-03-05T05:30:00Z', '2026-03-05T07:00:00Z', {
        from: at('2026-03-01T00:00:00Z'),
        until: null,
      }),
    ).toEqual([]);
  });
});
