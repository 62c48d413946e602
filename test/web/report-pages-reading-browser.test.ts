// What the administrator reads on the report pages, on a phone (360 px, a mobile browser) in Chromium, over the
// known history (test/reports/known-history.ts): every time under the filters named in the one format the
// other pages use, the bookings heat map captioned with what it counts and the zone its hours are in, and the
// sync-health summary drawn inside its card.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { localTime } from '../../src/lib/local-time.js';
import { REPORT_NAMES } from '../../src/reports/report-query.js';
import {
  knownHistoryOptions,
  scriptKnownHistory,
  T0,
  T3,
  type KnownHistory,
} from '../reports/known-history.js';
import { launchChromium } from '../support/browser.js';
import { FakeClock } from '../support/sync-harness.js';
import { ADMIN_TOKEN, createWebHarness, type WebHarness } from '../support/web-harness.js';
import { patient } from '../support/patience.js';

let k: KnownHistory;
let web: WebHarness;
let browser: Browser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  const clock = new FakeClock(new Date(T0));
  web = await createWebHarness('report_pages_reading', knownHistoryOptions(clock));
  k = await scriptKnownHistory(web.sync, clock);
  browser = await launchChromium();
  context = await browser.newContext({
    viewport: { width: 360, height: 800 },
    isMobile: true,
    hasTouch: true,
    extraHTTPHeaders: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  page = await context.newPage();
}, patient(60_000));
afterAll(async () => {
  await browser?.close();
  await web?.close();
});

/** What the page says under its filter form: the report itself (the form's hints show how to type an instant). */
async function reportText(path: string): Promise<string> {
  const response = await page.goto(`${web.url}${path}`);
  expect(response?.status()).toBe(200);
  // Evaluated as text: the test compiles without DOM types.
  return page.evaluate<string>(`(() => {
    document.querySelector('#report-filters').remove();
    return document.querySelector('main').innerText;
  })()`);
}

const ISO_INSTANT = /\d{4}-\d\d-\d\dT\d\d:\d\d/;

describe('times on the report pages', () => {
  const asOf = localTime(new Date(T3), 'UTC');

  it.each([...REPORT_NAMES.map((name) => `/admin/reports/${name}`), '/admin/reports/bookings?by=booking'])(
    '%s names the instant it is as of, and every other time, as the other pages do',
    async (path) => {
      const text = await reportText(path);
      expect(text).toContain(asOf);
      expect(text.match(new RegExp(ISO_INSTANT.source, 'g')) ?? []).toEqual([]);
    },
  );

  it('lists each booking by when it starts, in the same format', async () => {
    const text = await reportText(`/admin/reports/bookings?by=booking&connection=${k.berlin.connectionId}`);
    // The first booking of the known history: Mar 28 10:00 in Berlin.
    expect(text).toContain(localTime(new Date('2026-03-28T09:00:00Z'), 'UTC'));
  });
});

describe('the report rows', () => {
  // Each line box of a cell's text: a value broken across lines has more than one.
  const BROKEN_WORDS = `[...document.querySelectorAll('#report-rows td')]
    .filter((cell) => !/\\s/.test(cell.innerText.trim()))
    .filter((cell) => {
      const range = document.createRange();
      range.selectNodeContents(cell);
      return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1;
    })
    .map((cell) => cell.innerText.trim())`;

  it.each(['availability', 'bookings', 'sync-health'])(
    '%s: no one-word value (a day, an address) is broken across lines',
    async (name) => {
      await page.goto(`${web.url}/admin/reports/${name}`);
      await expect(page.evaluate<string[]>(BROKEN_WORDS)).resolves.toEqual([]);
    },
  );
});

describe('the bookings heat map', () => {
  /** Its caption, above it, which is also its table's name for a screen reader. */
  async function caption(path: string): Promise<string> {
    await page.goto(`${web.url}${path}`);
    const text = await page.locator('#heatmap-caption').innerText({ timeout: patient(2000) });
    await expect(page.getByRole('table', { name: text, exact: true }).count()).resolves.toBe(1);
    return text;
  }

  it('says what it counts, in the hours of the one connection shown', async () => {
    await expect(caption(`/admin/reports/bookings?connection=${k.berlin.connectionId}`)).resolves.toBe(
      'Bookings by the weekday and hour they start, in Europe/Berlin time',
    );
  });

  it('says so when its hours are in the zone asked for', async () => {
    await expect(caption('/admin/reports/bookings?tz=UTC')).resolves.toBe(
      'Bookings by the weekday and hour they start, in UTC time',
    );
  });

  it('says so when each connection counts in its own zone', async () => {
    await expect(caption('/admin/reports/bookings')).resolves.toBe(
      'Bookings by the weekday and hour they start, each in its connection’s own time zone',
    );
  });
});

/**
 * Pixels drawn between the window's left edge and `selector`'s box, over the box's height, that differ from
 * the page's background: none when nothing (a list's bullet) hangs out of the box. The screenshot is decoded
 * in a blank tab, whose canvas no page's policy governs.
 */
async function inkLeftOf(selector: string): Promise<number> {
  await page.evaluate('window.scrollTo(0, 0)');
  const box = await page.locator(selector).boundingBox();
  if (box === null) throw new Error(`${selector} is not shown`);
  const strip = await page.screenshot({
    fullPage: true,
    clip: { x: 0, y: box.y, width: Math.floor(box.x), height: box.height },
  });
  const blank = await context.newPage();
  try {
    return await blank.evaluate<number>(`(async () => {
      const image = new Image();
      image.src = 'data:image/png;base64,${strip.toString('base64')}';
      await image.decode();
      const canvas = document.createElement('canvas');
      canvas.width = image.width;
      canvas.height = image.height;
      const drawing = canvas.getContext('2d');
      drawing.drawImage(image, 0, 0);
      const pixels = drawing.getImageData(0, 0, image.width, image.height).data;
      let ink = 0;
      for (let i = 0; i < pixels.length; i += 4) {
        if ([0, 1, 2].some((c) => Math.abs(pixels[i + c] - pixels[c]) > 24)) ink++;
      }
      return ink;
    })()`);
  } finally {
    await blank.close();
  }
}

describe('the sync-health summary', () => {
  it('keeps its bullets inside its card', async () => {
    await page.goto(`${web.url}/admin/reports/sync-health`);
    await expect(inkLeftOf('#report-summary')).resolves.toBe(0);
  });
});
