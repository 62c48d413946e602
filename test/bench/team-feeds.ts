// Benchmark: a team feed of 10 members over 28 days beside one member's own feed. Each member's snapshot holds
// 28 days of 30-minute slots of three event types in working hours that differ by member (so `all` has
// pieces to drop and `any` splits often), a fifth of them booked. Measured through the web role: the cold
// render (a request after a member's snapshot moved: read, team maths, render, gzip) and the cached 200 and
// 304 under load (autocannon in a second process).
import { randomUUID } from 'node:crypto';
import { commitSuccessfulSync } from '../../src/store/snapshots.js';
import type { FetchedSlot } from '../../src/store/slot-diff.js';
import { createTeamStore } from '../../src/store/teams.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { check, type BenchSection } from './bench-result.js';
import { runLoad, type LoadResult } from './load-generator.js';
import { round } from './process-stats.js';

const MEMBERS = 10;
const DAYS = 28;
const EVENT_IDS = ['evt_intro', 'evt_deep', 'evt_hours'];
const COLD_RUNS = 7;

/** 30-minute slots of every event type, weekdays, from `fromHour` for 8 hours (UTC), a fifth of starts booked. */
function memberSlots(startMs: number, fromHour: number): FetchedSlot[] {
  const slots: FetchedSlot[] = [];
  for (let day = 0; day < DAYS; day++) {
    const date = new Date(startMs + day * 86_400_000);
    if (date.getUTCDay() === 0 || date.getUTCDay() === 6) continue;
    for (let half = 0; half < 16; half++) {
      if ((day * 16 + half + fromHour) % 5 === 4) continue;
      const startsAt = new Date(
        Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate(), fromHour) + half * 1_800_000,
      );
      for (const eventId of EVENT_IDS) {
        slots.push({ eventId, startsAt, endsAt: new Date(startsAt.getTime() + 1_800_000) });
      }
    }
  }
  return slots;
}

async function member(h: WebHarness, index: number): Promise<string> {
  const prisma = h.sync.db.prisma;
  const now = h.sync.clock.now();
  const name = `Member ${String(index + 1).padStart(2, '0')}`;
  const connection = await prisma.connection.create({
    data: { upstreamUserId: `bench-${randomUUID()}`, email: `m${index}@example.test`, timezone: 'UTC' },
  });
  const startOfToday = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  await commitSuccessfulSync(prisma, {
    connectionId: connection.id,
    snapshot: {
      profile: { payload: { name }, email: `m${index}@example.test`, name, timezone: 'UTC' },
      eventTypes: EVENT_IDS.map((id, i) => ({
        upstreamEventId: id,
        title: ['Intro call', 'Deep dive', 'Office hours'][i] ?? id,
        durationMinutes: 30,
        enabled: true,
        secret: false,
        url: `https://book.calendbook.test/m${index}/${id}`,
        color: '#1e90ff',
        payload: { event_id: id },
      })),
      overviews: [],
      // Working hours start between 06:00 and 10:30 UTC: everyone overlaps for a few hours a day.
      slots: memberSlots(startOfToday + 86_400_000, 6 + (index % 4) + (index % 2) * 0.5).filter(
        (s) => s.startsAt.getTime() > now.getTime(),
      ),
    },
    run: { id: randomUUID(), jobId: null, attempt: 1, startedAt: now, callsByEndpoint: {} },
    now,
    next: now,
  });
  return connection.id;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

export async function benchTeamFeeds(options: { seconds?: number } = {}): Promise<BenchSection[]> {
  const seconds = options.seconds ?? 5;
  const sink: string[] = [];
  sink.push = () => 0;
  const h = await createWebHarness('bench_team_feeds', {
    webEnv: { FEED_RATE_LIMIT_PER_MINUTE: '0', FEED_DEFAULT_DAYS: String(DAYS) },
    logLines: sink,
  });
  try {
    const prisma = h.sync.db.prisma;
    const memberIds: string[] = [];
    for (let i = 0; i < MEMBERS; i++) memberIds.push(await member(h, i));
    const teams = createTeamStore(prisma);
    const team = await teams.create('Bench team');
    await teams.addMembers(team.id, memberIds);
    const feeds = {
      'one person': (await h.feeds.create({ connectionId: memberIds[0]! })).token,
      'team, all free': (await h.feeds.createTeamFeed({ teamId: team.id, options: { mode: 'all' } })).token,
      'team, who is free': (await h.feeds.createTeamFeed({ teamId: team.id, options: { mode: 'any' } }))
        .token,
    };

    const sections: BenchSection[] = [];
    for (const [name, token] of Object.entries(feeds)) {
      const path = `/feeds/${token}.ics`;
      const first = await h.get(path);
      check(first.status === 200, `${name}: answered ${first.status}`);
      const events = first.text.split('BEGIN:VEVENT').length - 1;
      check(events > 0, `${name}: no events`);

      // Cold: member 0's snapshot moved (as a sync that changed something does), so the next request renders.
      const coldMs: number[] = [];
      for (let i = 0; i < COLD_RUNS; i++) {
        await prisma.connection.update({
          where: { id: memberIds[0]! },
          data: { feedVersion: { increment: 1 } },
        });
        await h.deps.feedChanges.caughtUp();
        const started = performance.now();
        const response = await h.get(path);
        coldMs.push(performance.now() - started);
        check(response.status === 200, `${name}: cold request answered ${response.status}`);
      }

      const warm = await h.get(path);
      const revalidate = { 'if-none-match': String(warm.headers.etag) };
      check((await h.get(path, revalidate)).status === 304, `${name}: If-None-Match did not answer 304`);
      const cached200: LoadResult = await runLoad({ url: `${h.url}${path}`, connections: 50, seconds });
      const cached304: LoadResult = await runLoad({
        url: `${h.url}${path}`,
        connections: 50,
        seconds,
        headers: revalidate,
      });
      for (const [what, r, status] of [
        ['200', cached200, '200'],
        ['304', cached304, '304'],
      ] as const) {
        const other = Object.entries(r.statuses).filter(([s]) => s !== status);
        check(r.errors === 0 && other.length === 0, `${name} ${what}: ${JSON.stringify(other)}`);
      }
      sections.push({
        benchmark: `feed of ${name}, ${DAYS} days`,
        inputs: {
          members: name === 'one person' ? 1 : MEMBERS,
          days: DAYS,
          openSlotsPerMember: Math.round(
            (await prisma.slot.count({ where: { goneAt: null, connectionId: { in: memberIds } } })) / MEMBERS,
          ),
          events,
          bodyBytes: warm.body.length,
          loadConnections: 50,
          loadSeconds: seconds,
        },
        figures: {
          coldRequestMsMedian: round(median(coldMs), 1),
          cached200RequestsPerSecond: round(cached200.requestsPerSecond, 0),
          cached200P99Ms: cached200.p99Ms,
          cached304RequestsPerSecond: round(cached304.requestsPerSecond, 0),
          cached304P99Ms: cached304.p99Ms,
        },
      });
    }
    return sections;
  } finally {
    await h.close();
  }
}
