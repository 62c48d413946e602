// The edges of a share page's week (issue 41, findings 9 and 10), over real sockets: a free block that starts
// in the shown week and runs past its end is shown whole under the day it starts (page, copy box, `.txt`, and
// the JSON API for a range ending that day), and the next week does not list its tail again; the page's
// Last-Modified moves when the days it shows move (`?week=1` a day later) and when the feed is renamed, so a
// client revalidating with If-Modified-Since alone gets the new page, not 304.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DateTime } from 'luxon';
import { createTeamStore } from '../../src/store/teams.js';
import { FakeClock } from '../support/sync-harness.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';

/** The owner, user 0, is in Europe/Berlin; the viewer picks Kyiv, an hour ahead in December. */
const OWNER_ZONE = 'Europe/Berlin';
const ZONE = 'Europe/Kyiv';
/** Saturday 5 December 2026, 10:00 in Kyiv: the week from today runs Saturday to Friday 11 December. */
const NOW = '2026-12-05T08:00:00Z';
/** Free on Friday evenings into Saturday mornings, in the owner's zone: 21:00–05:00 Berlin, 22:00–06:00 Kyiv. */
const EVENING = { start: '21:00', end: '24:00' };
const MORNING = { start: '00:00', end: '05:00' };

let h: WebHarness;
let clock: FakeClock;
let connectionId: string;
let feedId: string;
let feedToken: string;
let ownerCookie: string;
let secret: string;

beforeAll(async () => {
  clock = new FakeClock(new Date(NOW));
  h = await createWebHarness('web_share_week_edges', { clock, simulator: { users: 1 } });
  const user = h.sync.sim.users[0]!;
  expect(user.timezone).toBe(OWNER_ZONE);
  h.sync.sim.control.setWeeklyHours(user.id, {
    mon: [],
    tue: [],
    wed: [],
    thu: [],
    fri: [EVENING],
    sat: [MORNING],
    sun: [],
  });
  h.sync.sim.control.setDisabledDates(user.id, { days: [], months: [] });
  const connected = await h.connectViaWeb(user.email);
  connectionId = connected.connectionId;
  ownerCookie = connected.ownerCookie;
  await h.syncNow(connectionId);
  feedToken = connected.token!;
  feedId = (await h.feeds.findByToken(feedToken))!.id;
  secret = (await h.deps.shareLinks.create({ feedId, label: 'edges', expiresAt: null, now: clock.now() }))
    .secret;
});
afterAll(async () => {
  await h?.close();
});

/** The Friday block as the hours above make it, in the viewer's zone. */
function fridayBlock(friday: string) {
  const start = DateTime.fromISO(`${friday}T${EVENING.start}`, { zone: OWNER_ZONE });
  const end = DateTime.fromISO(`${friday}T${MORNING.end}`, { zone: OWNER_ZONE }).plus({ days: 1 });
  return {
    start: start.toJSDate().toISOString(),
    end: end.toJSDate().toISOString(),
    text: `${start.setZone(ZONE).toFormat('HH:mm')}–${end.setZone(ZONE).setLocale('en-GB').toFormat('ccc HH:mm')}`,
  };
}

const blocksIn = (html: string) =>
  [...html.matchAll(/class="share-block"\s+data-start="([^"]+)"\s+data-end="([^"]+)"/g)].map((m) => ({
    start: m[1],
    end: m[2],
  }));
const daysIn = (html: string) =>
  [...html.matchAll(/class="share-day" data-date="([^"]+)"/g)].map((m) => m[1]);
const copyBoxOf = (html: string) =>
  /<textarea id="share-copy-text"[^>]*>([^<]*)<\/textarea>/.exec(html)?.[1] ?? '';

describe('a free block across the end of the shown week', () => {
  it('is shown whole under the Friday it starts: on the page, in the copy box and in the text', async () => {
    const block = fridayBlock('2026-12-11');
    expect(block.text).toBe('22:00–Sat 06:00');
    const page = await h.get(`/share/${secret}?week=0&zone=${ZONE}`);
    expect(daysIn(page.text).at(-1)).toBe('2026-12-11');
    expect(blocksIn(page.text)).toContainEqual({ start: block.start, end: block.end });
    const line = `Fri 11 Dec: ${block.text} (${ZONE})`;
    expect(copyBoxOf(page.text).split('\n')).toContain(line);
    const text = await h.get(`/share/${secret}.txt?week=0&zone=${ZONE}`);
    expect(text.text.split('\n')).toContain(line);
  });

  it('is not listed again as a block of its own in the next week', async () => {
    const page = await h.get(`/share/${secret}?week=1&zone=${ZONE}`);
    expect(daysIn(page.text)[0]).toBe('2026-12-12');
    const next = fridayBlock('2026-12-18');
    expect(blocksIn(page.text)).toEqual([{ start: next.start, end: next.end }]);
    const text = await h.get(`/share/${secret}.txt?week=1&zone=${ZONE}`);
    expect(text.text).toBe(`Fri 18 Dec: ${next.text} (${ZONE})\n`);
  });

  it('comes whole from the JSON API for a range ending that Friday, and only there', async () => {
    const auth = { authorization: `Bearer ${feedToken}` };
    const free = async (from: string, to: string) => {
      const answer = await h.get(
        `/api/v1/connections/${connectionId}/availability?from=${from}&to=${to}&zone=${ZONE}`,
        auth,
      );
      expect(answer.status).toBe(200);
      return (JSON.parse(answer.text) as { free: { start: string; end: string }[] }).free.map((b) => ({
        start: new Date(b.start).toISOString(),
        end: new Date(b.end).toISOString(),
      }));
    };
    const block = fridayBlock('2026-12-11');
    expect(await free('2026-12-05', '2026-12-11')).toContainEqual({ start: block.start, end: block.end });
    const next = fridayBlock('2026-12-18');
    expect(await free('2026-12-12', '2026-12-18')).toEqual([{ start: next.start, end: next.end }]);
  });
});

describe('a team feed’s block across the end of the shown week', () => {
  it('is shown whole under its Friday too, and not again the week after', async () => {
    const team = await createTeamStore(h.sync.db.prisma).create('Night desk');
    await createTeamStore(h.sync.db.prisma).addMembers(team.id, [connectionId]);
    const { feed } = await h.feeds.createTeamFeed({ teamId: team.id, options: { mode: 'any' } });
    const teamSecret = (
      await h.deps.shareLinks.create({ feedId: feed.id, label: 'team', expiresAt: null, now: clock.now() })
    ).secret;
    const block = fridayBlock('2026-12-11');
    const text = await h.get(`/share/${teamSecret}.txt?week=0&zone=${ZONE}`);
    expect(text.text.split('\n')).toContain(`Fri 11 Dec: ${block.text} (${ZONE})`);
    const next = await h.get(`/share/${teamSecret}?week=1&zone=${ZONE}`);
    const after = fridayBlock('2026-12-18');
    expect(blocksIn(next.text)).toEqual([{ start: after.start, end: after.end }]);
  });
});

describe('the page’s Last-Modified', () => {
  it('moves when the days of a later week move: a day on, If-Modified-Since alone gets the new days', async () => {
    clock.set(NOW);
    const first = await h.get(`/share/${secret}?week=1&zone=${ZONE}`);
    expect(daysIn(first.text)[0]).toBe('2026-12-12');
    const since = first.headers['last-modified'] as string;
    expect((await h.get(`/share/${secret}?week=1&zone=${ZONE}`, { 'if-modified-since': since })).status).toBe(
      304,
    );
    clock.advance(86_400);
    const dayLater = await h.get(`/share/${secret}?week=1&zone=${ZONE}`, { 'if-modified-since': since });
    expect(dayLater.status).toBe(200);
    expect(daysIn(dayLater.text)[0]).toBe('2026-12-13');
    clock.set(NOW);
  });

  it('moves at midnight in the owner’s zone too, where the feed’s days end: the last week gains a next one', async () => {
    // 23:30 in Berlin is 14:30 in Los Angeles: the owner's day ends first, the viewer's days stay.
    const viewer = 'America/Los_Angeles';
    clock.set('2026-12-05T22:30:00Z');
    const last = await h.get(`/share/${secret}?week=99&zone=${viewer}`);
    const index = /name="week" value="(\d+)"/.exec(last.text)?.[1];
    expect(last.text).not.toContain('rel="next"');
    const since = last.headers['last-modified'] as string;
    clock.set('2026-12-05T23:30:00Z');
    const later = await h.get(`/share/${secret}?week=${index}&zone=${viewer}`, {
      'if-modified-since': since,
    });
    expect(later.status).toBe(200);
    expect(later.text).toContain('rel="next"');
    clock.set(NOW);
  });

  it('moves when the owner renames the feed: If-Modified-Since alone gets the new heading', async () => {
    clock.set(NOW);
    const first = await h.get(`/share/${secret}?zone=${ZONE}`);
    expect(first.text).not.toContain('<p class="share-feed">Friday nights</p>');
    const since = first.headers['last-modified'] as string;
    clock.advance(60);
    expect((await rename('Friday nights')).status).toBe(303);
    const again = await h.get(`/share/${secret}?zone=${ZONE}`, { 'if-modified-since': since });
    expect(again.status).toBe(200);
    expect(again.text).toContain('<p class="share-feed">Friday nights</p>');
    expect(Date.parse(again.headers['last-modified'] as string)).toBeGreaterThan(Date.parse(since));

    // Named back as it was: the same heading as the first page, but not the page a client kept since.
    clock.advance(60);
    expect((await rename('')).status).toBe(303);
    const back = await h.get(`/share/${secret}?zone=${ZONE}`, {
      'if-modified-since': again.headers['last-modified'] as string,
    });
    expect(back.status).toBe(200);
    expect(back.text).not.toContain('<p class="share-feed">Friday nights</p>');
    clock.set(NOW);
  });

  it('is moved by a rename from any writer, not only the owner’s page', async () => {
    const changedAt = async () =>
      (
        await h.sync.db.sql.query<{ label_changed_at: Date | null }>(
          'SELECT label_changed_at FROM feed WHERE id = $1',
          [feedId],
        )
      ).rows[0]!.label_changed_at;
    await h.sync.db.sql.query('UPDATE feed SET label_changed_at = NULL WHERE id = $1', [feedId]);
    await h.sync.db.sql.query('UPDATE feed SET options = options WHERE id = $1', [feedId]);
    expect(await changedAt()).toBeNull();
    await h.sync.db.sql.query(`UPDATE feed SET label = 'From psql' WHERE id = $1`, [feedId]);
    expect(await changedAt()).toBeInstanceOf(Date);
  });
});

/** The owner names the feed on /me, as its form does ('' for no name). */
function rename(label: string) {
  return h.request('POST', `/me/feeds/${feedId}/name`, {
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: h.url,
      cookie: ownerCookie,
      accept: 'text/html',
    },
    body: new URLSearchParams({ label }).toString(),
  });
}
