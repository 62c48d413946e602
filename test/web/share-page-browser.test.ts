// The share page in Chromium (issue 37), as the person it was sent to sees it. The clock stands on Thursday
// 5 March 2026, so the week shown runs across America's change to summer time (Sunday 8 March). With the
// browser in a half-hour zone (Asia/Kolkata), in America/New_York and in Pacific/Auckland, at 360 and 1280 px:
// the page moves to the browser's zone by itself; the blocks it lists are the JSON API's blocks for the feed's
// own token in that zone, each shown at its local time; "copy these times" and the .txt say the same; each
// block links to the booking pages the feed names for it; nothing scrolls sideways; axe finds nothing serious;
// no request leaves the origin. Without JavaScript the page is complete in the owner's zone. The embeddable
// page loads in an iframe on an origin its link lists and is refused on another.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DateTime } from 'luxon';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../support/browser.js';
import { seriousAxeViolations } from '../support/page-observations.js';
import { FakeClock } from '../support/sync-harness.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';

const NOW = '2026-03-05T09:00:00Z';
const OWNER_ZONE = 'Europe/Berlin';
const ZONES = ['Asia/Kolkata', 'America/New_York', 'Pacific/Auckland'] as const;
const WIDTHS = [360, 1280] as const;

let h: WebHarness;
let browser: Browser;
let connectionId: string;
let feedToken: string;
let secret: string;
let embedSecret: string;
let framing: { listed: http.Server; other: http.Server };

interface ApiBlock {
  start: string;
  end: string;
}

/** The API's free blocks for the feed's own token: the week from today in `zone`. */
async function apiBlocks(zone: string): Promise<ApiBlock[]> {
  const today = DateTime.fromISO(NOW, { zone });
  const query = `from=${today.toISODate()}&to=${today.plus({ days: 6 }).toISODate()}&zone=${encodeURIComponent(zone)}`;
  const answer = await h.get(`/api/v1/connections/${connectionId}/availability?${query}`, {
    authorization: `Bearer ${feedToken}`,
  });
  expect(answer.status).toBe(200);
  return (JSON.parse(answer.text) as { free: ApiBlock[] }).free;
}

/** A block as the page should show it in `zone`: "09:00–12:00", the end "Tue 02:00" on a later day. */
function shownAs(block: ApiBlock, zone: string): { day: string; text: string } {
  const start = DateTime.fromISO(block.start, { zone }).setLocale('en-GB');
  const end = DateTime.fromISO(block.end, { zone }).setLocale('en-GB');
  const midnight = start.startOf('day').plus({ days: 1 });
  const to = end.equals(midnight)
    ? '24:00'
    : end.toISODate() === start.toISODate()
      ? end.toFormat('HH:mm')
      : end.toFormat('ccc HH:mm');
  return { day: start.toFormat('ccc d LLL'), text: `${start.toFormat('HH:mm')}–${to}` };
}

function expectedCopyText(blocks: ApiBlock[], zone: string): string {
  const byDay = new Map<string, string[]>();
  for (const block of blocks) {
    const { day, text } = shownAs(block, zone);
    byDay.set(day, [...(byDay.get(day) ?? []), text]);
  }
  return [...byDay].map(([day, times]) => `${day}: ${times.join(', ')} (${zone})`).join('\n') + '\n';
}

/** The booking links of the feed's events by start instant: every URL its description names. */
async function feedLinksByStart(): Promise<Map<string, string[]>> {
  const ics = (await h.get(`/feeds/${feedToken}.ics`)).text.replace(/\r\n[ \t]/g, '');
  const links = new Map<string, string[]>();
  for (const event of ics.split('BEGIN:VEVENT').slice(1)) {
    const start = /^DTSTART[^:\r\n]*:(\d{8}T\d{6}Z)/m.exec(event)?.[1];
    if (start === undefined) continue;
    const description = /^DESCRIPTION:(.*)$/m.exec(event)?.[1] ?? '';
    const iso = DateTime.fromFormat(start, "yyyyMMdd'T'HHmmss'Z'", { zone: 'UTC' }).toISO()!;
    links.set(
      new Date(iso).toISOString(),
      [...new Set(description.match(/https?:\/\/[^\s\\,]+/g) ?? [])].sort(),
    );
  }
  return links;
}

interface ShownBlock {
  start: string;
  end: string;
  day: string;
  text: string;
  links: string[];
}

const SHOWN_BLOCKS = `[...document.querySelectorAll('.share-block')].map((li) => ({
  start: li.dataset.start,
  end: li.dataset.end,
  day: li.closest('.share-day').querySelector('h3').textContent.trim(),
  text: li.querySelector('.share-block-time').textContent.replace(/\\s+/g, '').replace(': book', '').replace(':book', ''),
  links: [...new Set([...li.querySelectorAll('a[href]')].map((a) => a.href))].sort(),
}))`;

async function openInZone(
  zone: string | undefined,
  width: number,
  options: { javaScriptEnabled?: boolean; locale?: string } = {},
): Promise<{ context: BrowserContext; tab: Page; requests: string[] }> {
  const context = await browser.newContext({
    viewport: { width, height: 800 },
    // The browser's language is its Accept-Language, which the page writes its days and times in.
    locale: options.locale ?? 'en-GB',
    ...(width < 500 ? { isMobile: true, hasTouch: true } : {}),
    ...(zone === undefined ? {} : { timezoneId: zone }),
    javaScriptEnabled: options.javaScriptEnabled ?? true,
  });
  const tab = await context.newPage();
  const requests: string[] = [];
  tab.on('request', (request) => requests.push(request.url()));
  return { context, tab, requests };
}

beforeAll(async () => {
  h = await createWebHarness('web_share_browser', {
    simulator: { users: 1 },
    clock: new FakeClock(new Date(NOW)),
  });
  const connected = await h.connectViaWeb(h.sync.sim.users[0]!.email);
  connectionId = connected.connectionId;
  await h.syncNow(connectionId);
  feedToken = connected.token!;
  const feedId = (await h.feeds.findByToken(feedToken))!.id;
  await h.sync.db.prisma.connection.update({ where: { id: connectionId }, data: { timezone: OWNER_ZONE } });
  secret = (
    await h.deps.shareLinks.create({ feedId, label: 'browser', expiresAt: null, now: h.sync.clock.now() })
  ).secret;
  const parent = (target: string) => (_request: http.IncomingMessage, response: http.ServerResponse) =>
    response
      .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(
        `<!doctype html><title>host</title><iframe id="share" src="${target}" width="800" height="600"></iframe>`,
      );
  let embedUrl = '';
  framing = {
    listed: http.createServer((q, r) => parent(embedUrl)(q, r)),
    other: http.createServer((q, r) => parent(embedUrl)(q, r)),
  };
  await Promise.all(
    Object.values(framing).map((server) => new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))),
  );
  const listedOrigin = `http://localhost:${(framing.listed.address() as AddressInfo).port}`;
  embedSecret = (
    await h.deps.shareLinks.create({
      feedId,
      label: 'embedded',
      expiresAt: null,
      now: h.sync.clock.now(),
      frameAncestors: [listedOrigin],
    })
  ).secret;
  embedUrl = `${h.url}/share/${embedSecret}/embed`;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await Promise.all(Object.values(framing ?? {}).map((server) => new Promise((ok) => server.close(ok))));
  await h?.close();
});

interface LocalBlock {
  shown: string;
  day: string;
  start: string;
}

const LOCAL_BLOCKS = `[...document.querySelectorAll('.share-block')].map((li) => ({
  shown: li.querySelector('.share-block-time').textContent,
  day: li.closest('.share-day').querySelector('h3').textContent,
  start: li.dataset.start,
}))`;

/** Whitespace as one space: ICU puts a narrow no-break space before "AM". */
const oneSpace = (text: string) => text.replace(/[\s\u202f]+/g, ' ').trim();

describe.each([
  ['en-US', /\d:\d\d [AP]M/],
  ['de-DE', /^\p{L}{2}\., \d{1,2}\. /u],
  ['ja-JP', /月\d+日/],
])('read in %s', (locale, looksLike) => {
  it('writes its days and times, and its copy text, as the viewer’s language does', async () => {
    const zone = 'America/New_York';
    const { context, tab } = await openInZone(zone, 1280, { locale });
    try {
      await tab.goto(`${h.url}/share/${secret}?zone=${encodeURIComponent(zone)}`);
      await tab.waitForSelector('.share-days');
      // Each block's day and start as Intl writes them in that language, read here rather than by the page's code.
      const time = new Intl.DateTimeFormat(locale, { timeStyle: 'short', timeZone: zone });
      const date = new Intl.DateTimeFormat(locale, {
        weekday: 'short',
        day: 'numeric',
        month: 'short',
        timeZone: zone,
      });
      const blocks = ((await tab.evaluate(LOCAL_BLOCKS)) as LocalBlock[]).map((b) => ({
        day: oneSpace(b.day),
        shown: oneSpace(b.shown),
        expectedDay: oneSpace(date.format(new Date(b.start))),
        expectedFrom: oneSpace(time.format(new Date(b.start))),
      }));
      expect(blocks.length).toBeGreaterThan(3);
      for (const block of blocks) {
        expect({ day: block.day, from: block.shown.slice(0, block.expectedFrom.length) }).toEqual({
          day: block.expectedDay,
          from: block.expectedFrom,
        });
      }
      expect(blocks.some((b) => looksLike.test(b.shown) || looksLike.test(b.day))).toBe(true);
      const copy = oneSpace(await tab.inputValue('#share-copy-text'));
      expect(copy).toContain(`${blocks[0]!.day}: ${blocks[0]!.expectedFrom}`);
    } finally {
      await context.close();
    }
  });
});

describe.each(ZONES)('with the browser in %s', (zone) => {
  describe.each(WIDTHS)('at %i px', (width) => {
    let tab: Page;
    let context: BrowserContext;
    let requests: string[];
    beforeAll(async () => {
      ({ tab, context, requests } = await openInZone(zone, width));
      await tab.goto(`${h.url}/share/${secret}`);
      await tab.waitForURL(/[?&]zone=/);
      await tab.waitForSelector('.share-days');
    });
    afterAll(async () => {
      await context?.close();
    });

    it('moves to the browser’s zone and says so, by its current IANA name', async () => {
      // Chromium's ICU still calls Asia/Kolkata Asia/Calcutta.
      expect([zone, 'Asia/Calcutta']).toContain(new URL(tab.url()).searchParams.get('zone'));
      expect(await tab.textContent('[data-share-zone-name]')).toBe(zone);
      expect(await tab.inputValue('#share-zone')).toBe(zone);
    });

    it('lists exactly the API’s blocks for the feed, at their local times in that zone', async () => {
      const api = await apiBlocks(zone);
      expect(api.length).toBeGreaterThan(3);
      if (zone === 'America/New_York') {
        // The week shown crosses the change to summer time: blocks on both sides of it.
        expect(new Set(api.map((b) => b.start.slice(-6)))).toEqual(new Set(['-05:00', '-04:00']));
      }
      const shown = (await tab.evaluate(SHOWN_BLOCKS)) as ShownBlock[];
      expect(shown.map(({ start, end, day, text }) => ({ start, end, day, text }))).toEqual(
        api.map((b) => ({
          start: new Date(b.start).toISOString(),
          end: new Date(b.end).toISOString(),
          ...shownAs(b, zone),
        })),
      );
    });

    it('copies the same times, as the .txt gives them', async () => {
      const api = await apiBlocks(zone);
      const copy = await tab.inputValue('#share-copy-text');
      expect(copy).toBe(expectedCopyText(api, zone));
      const text = await h.get(`/share/${secret}.txt?zone=${encodeURIComponent(zone)}`);
      expect(text.text).toBe(copy);
    });

    it('links each block to the booking pages the feed names for it', async () => {
      const feed = await feedLinksByStart();
      const shown = (await tab.evaluate(SHOWN_BLOCKS)) as ShownBlock[];
      const withLinks = shown.filter((b) => b.links.length > 0);
      expect(withLinks.length).toBeGreaterThan(0);
      for (const block of shown)
        expect({ start: block.start, links: block.links }).toEqual({
          start: block.start,
          links: feed.get(block.start) ?? [],
        });
    });

    it('does not scroll sideways', async () => {
      const widths = (await tab.evaluate(
        '({ page: document.documentElement.scrollWidth, window: window.innerWidth })',
      )) as { page: number; window: number };
      expect(widths.page).toBeLessThanOrEqual(widths.window);
    });

    it('has no serious axe violation', async () => {
      expect(await seriousAxeViolations(tab)).toEqual([]);
    });

    it('requests nothing from another origin', () => {
      expect(requests.length).toBeGreaterThan(1);
      expect(requests.filter((url) => !url.startsWith(`${h.url}/`))).toEqual([]);
    });
  });
});

describe('without JavaScript', () => {
  it('is complete in the owner’s zone: the API’s blocks, the copy text, the week’s navigation', async () => {
    const { context, tab } = await openInZone('Asia/Kolkata', 360, { javaScriptEnabled: false });
    try {
      await tab.goto(`${h.url}/share/${secret}`);
      expect(new URL(tab.url()).search).toBe('');
      expect(await tab.textContent('[data-share-zone-name]')).toBe(OWNER_ZONE);
      const api = await apiBlocks(OWNER_ZONE);
      const shown = (await tab.evaluate(SHOWN_BLOCKS)) as ShownBlock[];
      expect(shown.map(({ day, text }) => ({ day, text }))).toEqual(api.map((b) => shownAs(b, OWNER_ZONE)));
      expect(await tab.inputValue('#share-copy-text')).toBe(expectedCopyText(api, OWNER_ZONE));
      // The picker works without a script: a plain GET form.
      await tab.selectOption('#share-zone', 'Asia/Kolkata');
      await tab.click('.share-zone button[type="submit"]');
      await tab.waitForURL(/zone=Asia%2FKolkata/);
      expect(await tab.textContent('[data-share-zone-name]')).toBe('Asia/Kolkata');
      await tab.click('a[rel="next"]');
      await tab.waitForURL(/week=1/);
      expect(await tab.textContent('.share-range')).toContain('12 Mar');
    } finally {
      await context.close();
    }
  });
});

describe('embedded in another site’s page', () => {
  const frameOf = async (server: http.Server, host: string) => {
    const { context, tab } = await openInZone(undefined, 1280);
    const refusals: string[] = [];
    tab.on('console', (message) => refusals.push(message.text()));
    await tab.goto(`http://${host}:${(server.address() as AddressInfo).port}/`);
    const frame = tab.frames().find((f) => f !== tab.mainFrame());
    return { context, tab, frame, refusals };
  };

  it('loads in an iframe on an origin its link lists', async () => {
    const { context, frame } = await frameOf(framing.listed, 'localhost');
    try {
      await frame!.waitForSelector('.share-days');
      expect(await frame!.textContent('h1')).toBeTruthy();
    } finally {
      await context.close();
    }
  });

  it('is refused on any other origin', async () => {
    const { context, tab, refusals } = await frameOf(framing.other, '127.0.0.1');
    try {
      await tab.waitForLoadState('load');
      const frame = tab.frames().find((f) => f !== tab.mainFrame());
      const drawn = frame === undefined ? 0 : await frame.locator('.share-days').count();
      expect({ drawn, frameUrl: frame?.url(), refusals }).toEqual({
        drawn: 0,
        frameUrl: frame?.url(),
        refusals: expect.arrayContaining([expect.stringMatching(/frame-ancestors/)]),
      });
    } finally {
      await context.close();
    }
  });
});
