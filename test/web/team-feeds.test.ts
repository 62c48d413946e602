// Team feeds end to end (simulator → sync → served feed): what a team's subscribers see is checked against
// what each member's own feed says, minute by minute, computed here independently of the team maths; then the
// changes a team feed must follow (a member's booking, a member needing re-authorisation, a member leaving,
// the team going) and its free/busy.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DEFAULT_TEAM_MINIMUM_MINUTES } from '../../src/feeds/feed-options.js';
import { createTeamStore, type TeamRecord } from '../../src/store/teams.js';
import { eventsOf } from '../feeds/feed-fixtures.js';
import { assertStrictIcs } from '../support/ics-checks.js';
import { simUser } from '../support/sync-truth.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';

const MEMBERS = 3;
/**
 * Simulated users whose working hours overlap on weekdays (Berlin, Kolkata and St John's all work 12:00–13:00
 * UTC in March): a team of them has time when everyone is free.
 */
const MEMBER_USERS = [0, 2, 3];
/** Team feeds in mode all drop shorter pieces unless told otherwise. */
const MINIMUM = DEFAULT_TEAM_MINIMUM_MINUTES;

let h: WebHarness;
let team: TeamRecord;
/** Each member's connection id, display name and own default feed token. */
let members: { connectionId: string; name: string; token: string; email: string }[];
let allToken: string;
let anyToken: string;

const MINUTE = 60_000;
const parseUtc = (value: string) =>
  Date.UTC(
    +value.slice(0, 4),
    +value.slice(4, 6) - 1,
    +value.slice(6, 8),
    +value.slice(9, 11),
    +value.slice(11, 13),
  );
const unescaped = (value: string | undefined) =>
  (value ?? '').replace(/\\n/g, '\n').replace(/\\([,;\\])/g, '$1');

async function ics(token: string): Promise<string> {
  const response = await h.get(`/feeds/${token}.ics`);
  expect(response.status).toBe(200);
  assertStrictIcs(response.text);
  return response.text;
}

interface Block {
  start: number;
  end: number;
  summary: string;
  description: string;
}

const blocksOf = (text: string): Block[] =>
  eventsOf(text).map((e) => ({
    start: parseUtc(e.get('DTSTART')!),
    end: parseUtc(e.get('DTEND')!),
    summary: unescaped(e.get('SUMMARY')),
    description: unescaped(e.get('DESCRIPTION')),
  }));

/** Minutes (epoch minute numbers) inside any of the blocks. */
function minutesOf(blocks: readonly { start: number; end: number }[]): Set<number> {
  const minutes = new Set<number>();
  for (const b of blocks) for (let m = b.start / MINUTE; m < b.end / MINUTE; m++) minutes.add(m);
  return minutes;
}

/** Maximal runs of consecutive minutes, as blocks. */
function runsOf(minutes: Set<number>): { start: number; end: number }[] {
  const sorted = [...minutes].sort((a, b) => a - b);
  const runs: { start: number; end: number }[] = [];
  for (const m of sorted) {
    const last = runs.at(-1);
    if (last && last.end === m * MINUTE) last.end = (m + 1) * MINUTE;
    else runs.push({ start: m * MINUTE, end: (m + 1) * MINUTE });
  }
  return runs;
}

/** Every member's free minutes, read from their own feeds, before a common cut-off all windows reach. */
async function memberMinutes(): Promise<{ free: Set<number>[]; cutOff: number }> {
  const feeds = await Promise.all(members.map(async (m) => blocksOf(await ics(m.token))));
  // Windows start at each member's local midnight and are as long: a day before the earliest end is inside
  // every member's window and the team's (which runs from UTC midnight).
  const cutOff = Math.min(...feeds.map((f) => Math.max(...f.map((b) => b.end)))) - 24 * 60 * MINUTE;
  return { free: feeds.map((f) => minutesOf(f)), cutOff: Math.floor(cutOff / MINUTE) };
}

const until = (cutOff: number, minutes: Set<number>) => new Set([...minutes].filter((m) => m < cutOff));

beforeAll(async () => {
  h = await createWebHarness('web_team_feeds', { simulator: { users: 4 } });
  members = [];
  for (const user of MEMBER_USERS.map((i) => h.sync.sim.users[i]!)) {
    const connected = await h.connectViaWeb(user.email);
    await h.syncNow(connected.connectionId);
    members.push({
      connectionId: connected.connectionId,
      name: simUser(h.sync.sim, user.email).name,
      token: connected.token!,
      email: user.email,
    });
  }
  const teams = createTeamStore(h.sync.db.prisma);
  team = await teams.create('Design');
  team = await teams.addMembers(
    team.id,
    members.map((m) => m.connectionId),
  );
  allToken = (await h.feeds.createTeamFeed({ teamId: team.id, options: { mode: 'all' } })).token;
  anyToken = (await h.feeds.createTeamFeed({ teamId: team.id, options: { mode: 'any' } })).token;
});
afterAll(async () => {
  await h?.close();
});

describe('a team feed in mode all', () => {
  it('shows exactly the times every member’s own feed is free, in pieces of at least the minimum', async () => {
    const text = await ics(allToken);
    const team = blocksOf(text);
    const { free, cutOff } = await memberMinutes();
    const everyone = new Set([...free[0]!].filter((m) => free.every((f) => f.has(m))));
    const expected = runsOf(until(cutOff, everyone)).filter(
      // A run that reaches the cut-off may go on past it: it is not compared.
      (run) => run.end - run.start >= MINIMUM * MINUTE && run.end / MINUTE < cutOff,
    );
    const shown = team.filter((b) => b.end / MINUTE < cutOff);
    expect(expected.length).toBeGreaterThan(0);
    expect(shown.map((b) => [b.start, b.end])).toEqual(expected.map((r) => [r.start, r.end]));
    for (const block of team) {
      expect(block.end - block.start).toBeGreaterThanOrEqual(MINIMUM * MINUTE);
      expect(block.summary).toBe('Everyone free');
      expect(block.description).toBe(
        `Everyone is free: ${[...members.map((m) => m.name)].sort().join(', ')}.`,
      );
    }
  });

  it('is named after the team and says who is in it, by name and never by e-mail address', async () => {
    const text = await ics(allToken);
    expect(text).toContain('X-WR-CALNAME:Design – everyone free\r\n');
    const description = unescaped(/\r\nX-WR-CALDESC:(.*)\r\n/.exec(text.replace(/\r\n[ \t]/g, ''))?.[1]);
    expect(description).toContain(`Times when everyone in Design is free, at least ${MINIMUM} min at a time`);
    for (const m of members) expect(description).toContain(m.name);
    for (const m of members) expect(text).not.toContain(m.email);
  });

  it('answers an unchanged poll with the same bytes, and revalidates to 304', async () => {
    const first = await h.get(`/feeds/${allToken}.ics`);
    const second = await h.get(`/feeds/${allToken}.ics`);
    expect(second.body.equals(first.body)).toBe(true);
    expect(second.headers.etag).toBe(first.headers.etag);
    const revalidated = await h.get(`/feeds/${allToken}.ics`, {
      'if-none-match': String(first.headers.etag),
    });
    expect(revalidated.status).toBe(304);
  });

  it('drops the pieces shorter than its own minimum', async () => {
    const longer = MINIMUM + 15;
    const { token } = await h.feeds.createTeamFeed({
      teamId: team.id,
      options: { mode: 'all', minimum: longer },
    });
    const { free, cutOff } = await memberMinutes();
    const shown = blocksOf(await ics(token)).filter((b) => b.end / MINUTE < cutOff);
    const everyone = new Set([...free[0]!].filter((m) => free.every((f) => f.has(m))));
    const runs = runsOf(until(cutOff, everyone)).filter((run) => run.end / MINUTE < cutOff);
    // Some pieces are shorter than this minimum (though not than the default's): those must go.
    expect(runs.some((run) => run.end - run.start < longer * MINUTE)).toBe(true);
    expect(shown.map((b) => [b.start, b.end])).toEqual(
      runs.filter((run) => run.end - run.start >= longer * MINUTE).map((r) => [r.start, r.end]),
    );
  });
});

describe('a team feed in mode any', () => {
  it('covers exactly the union of the members’ free time, naming who is free in each block', async () => {
    const team = blocksOf(await ics(anyToken));
    const { free, cutOff } = await memberMinutes();
    const anyone = new Set(free.flatMap((f) => [...f]));
    expect(until(cutOff, minutesOf(team))).toEqual(until(cutOff, anyone));
    for (let i = 1; i < team.length; i++) expect(team[i]!.start).toBeGreaterThanOrEqual(team[i - 1]!.end);
    for (const block of team.filter((b) => b.end / MINUTE < cutOff)) {
      const first = block.start / MINUTE;
      const freeHere = members.filter((_, i) => free[i]!.has(first)).map((m) => m.name);
      for (let m = first; m < block.end / MINUTE; m++) {
        // The same members are free throughout the block …
        expect(members.filter((_, i) => free[i]!.has(m)).map((x) => x.name)).toEqual(freeHere);
      }
      expect(block.description).toBe(`Free: ${[...freeHere].sort().join(', ')}.`);
      expect(block.summary).toBe(`${freeHere.length} of ${MEMBERS} free`);
    }
  });
});

describe('what moves a team feed', () => {
  it('a member’s booking: the next poll shows it, under a new validator', async () => {
    const before = await h.get(`/feeds/${anyToken}.ics`);
    const slot = await h.sync.db.prisma.slot.findFirstOrThrow({
      where: { connectionId: members[1]!.connectionId, goneAt: null },
      orderBy: { startsAt: 'asc' },
    });
    h.sync.sim.control.book(slot.upstreamEventId, slot.startsAt.toISOString());
    await h.syncNow(members[1]!.connectionId);
    await h.deps.feedChanges.caughtUp();
    const after = await h.get(`/feeds/${anyToken}.ics`, { 'if-none-match': String(before.headers.etag) });
    expect(after.status).toBe(200);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    // The team's free time follows the member's own feed again.
    const team = blocksOf(after.text);
    const { free, cutOff } = await memberMinutes();
    expect(before.text).not.toBe(after.text);
    expect(free[1]!.has(slot.startsAt.getTime() / MINUTE)).toBe(false);
    expect(until(cutOff, minutesOf(team))).toEqual(until(cutOff, new Set(free.flatMap((f) => [...f]))));
  });

  it('a member who needs re-authorisation keeps their last snapshot, and the description says so', async () => {
    const blocksBefore = blocksOf(await ics(allToken));
    await h.sync.db.prisma.connection.update({
      where: { id: members[2]!.connectionId },
      data: { status: 'needs_reauth' },
    });
    await h.deps.feedChanges.caughtUp();
    const text = await ics(allToken);
    expect(blocksOf(text)).toEqual(blocksBefore);
    expect(unescaped(text.replace(/\r\n[ \t]/g, ''))).toContain(
      `${members[2]!.name}'s account needs re-authorisation: their last synced free time is shown`,
    );
  });

  it('a member leaving: their free time no longer counts, and Last-Modified moves on', async () => {
    const before = await h.get(`/feeds/${anyToken}.ics`);
    await createTeamStore(h.sync.db.prisma).removeMember(team.id, members[2]!.connectionId);
    await h.deps.feedChanges.caughtUp();
    const after = await h.get(`/feeds/${anyToken}.ics`);
    expect(after.headers.etag).not.toBe(before.headers.etag);
    expect(new Date(String(after.headers['last-modified'])).getTime()).toBeGreaterThanOrEqual(
      new Date(String(before.headers['last-modified'])).getTime(),
    );
    expect(after.text).not.toContain(members[2]!.name);
    for (const block of blocksOf(after.text)) expect(block.summary).toMatch(/^[12] of 2 free$/);
  });

  it('its free/busy has the all-mode blocks as FREE periods, and no BUSY', async () => {
    const feed = blocksOf(await ics(allToken));
    const ifb = await h.get(`/freebusy/${allToken}.ifb`);
    expect(ifb.status).toBe(200);
    const periods = ifb.text
      .split('\r\n')
      .filter((line) => line.startsWith('FREEBUSY'))
      .map((line) => line.split(':')[1]!.split('/').map(parseUtc));
    expect(ifb.text).not.toContain('FBTYPE=BUSY');
    expect(periods).toEqual(feed.map((b) => [b.start, b.end]));
  });

  it('its minimum changed: If-Modified-Since alone gets the new blocks, the feed and its free/busy', async () => {
    const feed = (await h.feeds.findByToken(allToken))!;
    const before = await h.get(`/feeds/${allToken}.ics`);
    const ifbBefore = await h.get(`/freebusy/${allToken}.ifb`);
    const lastModified = before.headers['last-modified']!;
    expect((await h.get(`/feeds/${allToken}.ics`, { 'if-modified-since': lastModified })).status).toBe(304);
    // A team's Last-Modified comes from the database's clock (its membership): the writer's clock here reads
    // a minute past it, as a later change's would.
    const later = new Date(Date.parse(lastModified) + 60_000);
    await h.feeds.updateOptions(feed.id, { ...feed.options, minimum: 90 }, later);
    await h.deps.feedChanges.caughtUp();
    const after = await h.get(`/feeds/${allToken}.ics`, { 'if-modified-since': lastModified });
    expect(after.status).toBe(200);
    expect(unescaped(after.text.replace(/\r\n[ \t]/g, ''))).toContain('at least 1 h 30 min at a time');
    expect(Date.parse(after.headers['last-modified']!)).toBe(later.getTime());
    const ifbAfter = await h.get(`/freebusy/${allToken}.ifb`, {
      'if-modified-since': ifbBefore.headers['last-modified']!,
    });
    expect(ifbAfter.status).toBe(200);
    expect(ifbAfter.headers['last-modified']).toBe(after.headers['last-modified']);
  });

  it('the team deleted: its feeds answer 404', async () => {
    await createTeamStore(h.sync.db.prisma).delete(team.id);
    await h.deps.feedChanges.caughtUp();
    expect((await h.get(`/feeds/${allToken}.ics`)).status).toBe(404);
    expect((await h.get(`/feeds/${anyToken}.ics`)).status).toBe(404);
    expect((await h.get(`/freebusy/${allToken}.ifb`)).status).toBe(404);
    // The members' own feeds are theirs: they stay.
    expect((await h.get(`/feeds/${members[0]!.token}.ics`)).status).toBe(200);
  });
});
