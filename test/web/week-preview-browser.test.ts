// The owner's week preview in Chromium, read as a person reads it: where each event is drawn, measured against
// the grid's own hour lines, must cover the event's whole time as the feed gives it (a block from 22:00 to 02:00
// included), and the first day shown is today in the account's zone. At desktop width (seven days) and a
// phone's (three days); screenshots are left in the system's temp directory for a look.
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import ICAL from 'ical.js-v2';
import { DateTime } from 'luxon';
import type { Page } from 'playwright-core';
import { launchTestBrowser, type TestBrowser } from '../support/browser.js';
import { FakeClock } from '../support/sync-harness.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { patient } from '../support/patience.js';

/** Asia/Kolkata (UTC+05:30): at this instant it is already Friday 6 March there, still Thursday in UTC. */
const USER = 2;
const ZONE = 'Asia/Kolkata';
const NOW = '2026-03-05T20:00:00Z';
const TODAY = '2026-03-06';
/** Pixels are rounded to whole ones: a drawn edge may sit this many minutes off the hour line it stands for. */
const MINUTES_OF_SLACK = 3;

let h: WebHarness;
let browser: TestBrowser;
let page: Page;
let ownerCookie: string;
let feedUrl: string;

beforeAll(async () => {
  h = await createWebHarness('web_week_preview', { clock: new FakeClock(new Date(NOW)) });
  const user = h.sync.sim.users[USER]!;
  expect(user.timezone).toBe(ZONE);
  // Evenings and nights only, every day: each evening's free time runs on past midnight into the night.
  const night = [
    { start: '00:00', end: '02:00' },
    { start: '22:00', end: '24:00' },
  ];
  h.sync.sim.control.setWeeklyHours(user.id, {
    mon: night,
    tue: night,
    wed: night,
    thu: night,
    fri: night,
    sat: night,
    sun: night,
  });
  h.sync.sim.control.setDisabledDates(user.id, { days: [], months: [] });
  const connected = await h.connectViaWeb(user.email);
  await h.syncNow(connected.connectionId);
  ownerCookie = connected.ownerCookie;
  feedUrl = `${h.url}/feeds/${connected.token!}.ics`;
  browser = await launchTestBrowser();
  ({ page } = browser);
  const [name, value] = ownerCookie.split(/=(.*)/s) as [string, string];
  await browser.context.addCookies([{ name, value, url: h.url }]);
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

interface DrawnPiece {
  /** The day column it is drawn in. */
  date: string;
  /** Minutes after that day's midnight its top and bottom edges stand for (past 1440 on a grid past midnight). */
  from: number;
  to: number;
}

// Runs in the page (a string: the project's TypeScript has no DOM types). Every drawn piece of an event,
// placed by its box against the hour lines (their data-time) and the day columns (their data-date) of the grid.
const DRAWN_PIECES_SCRIPT = `(() => {
  const section = document.getElementById('week-preview');
  const minutesOf = (time) => {
    const [hours, minutes] = time.split(':').map(Number);
    return hours * 60 + minutes;
  };
  const lines = [...section.querySelectorAll('td.fc-timegrid-slot-lane[data-time]')].map((lane) => ({
    minute: minutesOf(lane.dataset.time),
    box: lane.getBoundingClientRect(),
  }));
  const first = lines[0];
  const last = lines[lines.length - 1];
  const slotMinutes = lines.length > 1 ? lines[1].minute - first.minute : 30;
  const pixelsPerMinute = (last.box.bottom - first.box.top) / (last.minute + slotMinutes - first.minute);
  const minuteAt = (y) => first.minute + (y - first.box.top) / pixelsPerMinute;
  const columns = [...section.querySelectorAll('td.fc-timegrid-col[data-date]')].map((col) => ({
    date: col.dataset.date,
    box: col.getBoundingClientRect(),
  }));
  const pieces = [...section.querySelectorAll('.fc-timegrid-event')].map((event) => {
    const box = event.getBoundingClientRect();
    const middle = (box.left + box.right) / 2;
    const column = columns.find((c) => c.box.left <= middle && middle < c.box.right);
    return { date: column.date, from: minuteAt(box.top), to: minuteAt(box.bottom) };
  });
  return { columns: columns.map((c) => c.date), pieces };
})()`;

/** The preview's box on the page (not in the window): a screenshot of it as the page is, scrolled to the top. */
const PREVIEW_BOX_SCRIPT = `(() => {
  const box = document.getElementById('week-preview').getBoundingClientRect();
  return { x: box.left + window.scrollX, y: box.top + window.scrollY, width: box.width, height: box.height };
})()`;

/** The first instant of [from, to) that no drawn piece covers (give or take the slack), or null. */
function firstNotDrawn(
  from: DateTime,
  to: DateTime,
  pieces: readonly { start: DateTime; end: DateTime }[],
): string | null {
  const slack = { minutes: MINUTES_OF_SLACK };
  let reached = from;
  for (const piece of [...pieces].sort((a, b) => a.start.toMillis() - b.start.toMillis())) {
    if (piece.end <= reached || piece.start > reached.plus(slack)) continue;
    reached = DateTime.max(reached, piece.end);
  }
  return reached >= to.minus(slack) ? null : reached.toISO();
}

/** The feed's events, as instants. */
async function feedEvents(): Promise<{ start: DateTime; end: DateTime }[]> {
  const text = (await h.get(feedUrl)).text;
  return ICAL.Component.fromString(text)
    .getAllSubcomponents('vevent')
    .map((vevent) => new ICAL.Event(vevent))
    .map((event) => ({
      start: DateTime.fromJSDate(event.startDate.toJSDate(), { zone: ZONE }),
      end: DateTime.fromJSDate(event.endDate.toJSDate(), { zone: ZONE }),
    }));
}

describe.each([
  ['desktop', 1280, 900, 7],
  ['phone', 390, 844, 3],
] as const)('the week preview at %s width', (label, width, height, days) => {
  it('starts today in the account’s zone and draws every event whole, across midnight too', async () => {
    await page.setViewportSize({ width, height });
    await page.goto(`${h.url}/me`);
    await page.waitForSelector('#week-preview[data-ready="true"]', { timeout: patient(20_000) });
    // The page from its top, as a person scrolls it (an element's own screenshot scrolls the sticky day row).
    const clip = await page.evaluate<{ x: number; y: number; width: number; height: number }>(
      PREVIEW_BOX_SCRIPT,
    );
    await page.screenshot({ path: path.join(tmpdir(), `week-preview-${label}.png`), fullPage: true, clip });

    const { columns, pieces } = await page.evaluate<{ columns: string[]; pieces: DrawnPiece[] }>(
      DRAWN_PIECES_SCRIPT,
    );
    expect(columns[0]).toBe(TODAY);
    expect(columns).toHaveLength(days);

    const shownFrom = DateTime.fromISO(TODAY, { zone: ZONE });
    const shownTo = shownFrom.plus({ days });
    const shown = (await feedEvents()).filter((e) => e.start < shownTo && e.end > shownFrom);
    // The case this is about: blocks that run past midnight, in the days shown.
    expect(shown.some((e) => !e.end.equals(e.end.startOf('day')) && !e.start.hasSame(e.end, 'day'))).toBe(
      true,
    );

    const piecesAsInstants = pieces.map((piece) => {
      const midnight = DateTime.fromISO(piece.date, { zone: ZONE });
      return { start: midnight.plus({ minutes: piece.from }), end: midnight.plus({ minutes: piece.to }) };
    });
    for (const event of shown) {
      // The part of the event inside the days shown must be drawn: its start, every minute, its end.
      const from = DateTime.max(event.start, shownFrom);
      const to = DateTime.min(event.end, shownTo);
      const what = `${event.start.toISO()}–${event.end.toISO()}`;
      expect({ what, notDrawnFrom: firstNotDrawn(from, to, piecesAsInstants) }).toEqual({
        what,
        notDrawnFrom: null,
      });
    }
  });
});
