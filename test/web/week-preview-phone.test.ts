// The owner's week preview on a phone (360 px wide, the narrowest common one), read as a person reads it: its
// toolbar stays one row, and a 30-minute event says when it runs, whole, with no text cut off or left dangling
// (it read "10:30–11:00 -", the title cut after the separator). Screenshots are left in the temp directory.
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { launchTestBrowser, type TestBrowser } from '../support/browser.js';
import { FakeClock } from '../support/sync-harness.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { patient } from '../support/patience.js';

/** User 0 has a 30-minute event type ("Intro call"); its other enabled types are longer than any range below. */
const USER = 0;
/** The year's last day: the three days shown run into the next year, the longest title the toolbar gets. */
const NOW = '2026-12-31T06:00:00Z';
/** Half an hour twice a day: each range holds one 30-minute slot and nothing longer, so every event is 30 min. */
const HALF_HOURS = [
  { start: '10:30', end: '11:00' },
  { start: '14:00', end: '14:30' },
];

let h: WebHarness;
let browser: TestBrowser;
let page: Page;

beforeAll(async () => {
  h = await createWebHarness('web_week_preview_phone', { clock: new FakeClock(new Date(NOW)) });
  const user = h.sync.sim.users[USER]!;
  const days = { mon: HALF_HOURS, tue: HALF_HOURS, wed: HALF_HOURS, thu: HALF_HOURS, fri: HALF_HOURS };
  h.sync.sim.control.setWeeklyHours(user.id, { ...days, sat: HALF_HOURS, sun: HALF_HOURS });
  h.sync.sim.control.setDisabledDates(user.id, { days: [], months: [] });
  const connected = await h.connectViaWeb(user.email);
  await h.syncNow(connected.connectionId);
  browser = await launchTestBrowser();
  ({ page } = browser);
  const [name, value] = connected.ownerCookie.split(/=(.*)/s) as [string, string];
  await browser.context.addCookies([{ name, value, url: h.url }]);
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

interface ToolbarRows {
  /** Rows the toolbar's buttons sit on. */
  buttonRows: number;
  /** Lines the title's text takes. */
  titleLines: number;
  besideButtons: boolean;
}

interface DrawnEvent {
  /** What a person reads in the event's box: its text, as drawn, clipped parts left out. */
  shown: string;
  /** Its whole text, as FullCalendar put it in the box. */
  whole: string;
  /** Text parts cut by the box: wider or lower than it, or cut inside themselves. */
  cut: string[];
  /** A separator (" - ") drawn after the time with nothing after it. */
  danglingSeparator: boolean;
}

// Runs in the page (a string: the project's TypeScript has no DOM types).
const TOOLBAR_SCRIPT = `(() => {
  const toolbar = document.querySelector('#week-preview .fc-header-toolbar');
  const buttonTops = [...toolbar.querySelectorAll('.fc-button')].map((b) => b.getBoundingClientRect().top);
  const buttonRows = new Set(buttonTops.map((top) => Math.round(top / 4))).size;
  const range = document.createRange();
  range.selectNodeContents(toolbar.querySelector('.fc-toolbar-title'));
  const titleLines = new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
  // The title beside the buttons, not under them.
  const title = toolbar.querySelector('.fc-toolbar-title').getBoundingClientRect();
  const besideButtons = buttonTops.every((top) => top < title.bottom);
  return { buttonRows, titleLines, besideButtons };
})()`;

const EVENTS_SCRIPT = `(() => {
  const events = [...document.querySelectorAll('#week-preview .fc-timegrid-event')];
  return events.map((event) => {
    const box = event.getBoundingClientRect();
    const texts = [...event.querySelectorAll('.fc-event-time, .fc-event-title')].filter(
      (el) => getComputedStyle(el).display !== 'none' && el.textContent.trim() !== '',
    );
    const cut = texts
      .filter((el) => {
        const r = el.getBoundingClientRect();
        return (
          el.scrollWidth > el.clientWidth + 1 ||
          r.right > box.right + 1 ||
          r.bottom > box.bottom + 1 ||
          r.top < box.top - 1
        );
      })
      .map((el) => el.textContent);
    const time = event.querySelector('.fc-event-time');
    const after = time ? getComputedStyle(time, '::after').content : 'none';
    const separator = after !== 'none' && after !== 'normal' && after.replace(/["\\s\\u00a0]/g, '') !== '';
    const titleShown = texts.some((el) => el.classList.contains('fc-event-title') && !cut.includes(el.textContent));
    return {
      shown: texts.filter((el) => !cut.includes(el.textContent)).map((el) => el.textContent).join(' '),
      whole: event.textContent,
      cut,
      danglingSeparator: separator && !titleShown,
    };
  });
})()`;

describe('the week preview on a 360 px phone', () => {
  it('keeps its toolbar on one row and shows each 30-minute event’s whole time range, nothing cut', async () => {
    await page.setViewportSize({ width: 360, height: 780 });
    await page.goto(`${h.url}/me`);
    await page.waitForSelector('#week-preview[data-ready="true"]', { timeout: patient(20_000) });
    await page.screenshot({ path: path.join(tmpdir(), 'week-preview-360.png'), fullPage: true });

    expect(await page.evaluate<ToolbarRows>(TOOLBAR_SCRIPT)).toEqual({
      buttonRows: 1,
      titleLines: 1,
      besideButtons: true,
    });

    const events = await page.evaluate<DrawnEvent[]>(EVENTS_SCRIPT);
    // Two a day for the three days shown (today's morning one may have passed).
    expect(events.length).toBeGreaterThanOrEqual(5);
    for (const event of events) {
      expect({ whole: event.whole, cut: event.cut, dangling: event.danglingSeparator }).toEqual({
        whole: event.whole,
        cut: [],
        dangling: false,
      });
      // The time it runs, start and end, is among what is read.
      expect(event.shown).toMatch(/\b\d{2}:\d{2}–\d{2}:\d{2}\b/);
    }
  });
});
