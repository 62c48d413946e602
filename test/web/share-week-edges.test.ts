// The edges of a share page's week (issue 41, finding 9), over real sockets: a free block that starts in the
// shown week and runs past its end is shown whole under the day it starts (page, copy box, `.txt`, and the JSON
// API for a range ending that day), and the next week does not list its tail again.
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
  await h.syncNow(connectionId);
  feedToken = connected.token!;
  feedId = (await h.feeds.findByToken(feedToken))!.id;
  secret = (await h.deps.shareLinks.create({ feedId, label: 'edges', expiresAt: null })).secret;
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
    const teamSecret = (await h.deps.shareLinks.create({ feedId: feed.id, label: 'team', expiresAt: null }))
      .secret;
    const block = fridayBlock('2026-12-11');
    const text = await h.get(`/share/${teamSecret}.txt?week=0&zone=${ZONE}`);
    expect(text.text.split('\n')).toContain(`Fri 11 Dec: ${block.text} (${ZONE})`);
    const next = await h.get(`/share/${teamSecret}?week=1&zone=${ZONE}`);
    const after = fridayBlock('2026-12-18');
    expect(blocksIn(next.text)).toEqual([{ start: after.start, end: after.end }]);
  });
});
