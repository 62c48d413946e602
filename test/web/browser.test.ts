// The connect flow and the admin page in a real browser: Playwright driving Debian's Chromium. A simulated user
// approves on the consent page and lands on their own page with the feed links; once a real worker's first
// sync lands, the week preview draws the feed from its URL; the feed URL is opened, and an administrator signs
// in and rotates the feed's token.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { launchTestBrowser, type TestBrowser } from '../support/browser.js';
import ICAL from 'ical.js-v2';
import { DateTime } from 'luxon';
import { assertStrictIcs } from '../support/ics-checks.js';
import { waitFor } from '../support/wait-for.js';
import { ADMIN_TOKEN, createWebHarness, type WebHarness } from '../support/web-harness.js';
import { patient } from '../support/patience.js';

let h: WebHarness;
let page: Page;
let browser: TestBrowser;
let feedUrl: string;

/** A GET from inside the page: Chromium's own network stack, same origin as the page. */
function fetchInPage(url: string): Promise<{ status: number; type: string | null; text: string }> {
  return page.evaluate(async (target) => {
    const response = await fetch(target, { cache: 'no-store' });
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      text: await response.text(),
    };
  }, url);
}

beforeAll(async () => {
  h = await createWebHarness('web_browser');
  await h.sync.startRoles(['worker']);
  browser = await launchTestBrowser();
  ({ page } = browser);
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe('in Chromium', () => {
  it('connects a simulated user through the consent page and lands on their page, with the feed drawn from its URL', async () => {
    const user = h.sync.sim.users[2]!;
    await page.goto(`${h.url}/connect`);
    expect(page.url()).toContain(`${h.sync.sim.authUrl}/login`);
    await page.click(`button[data-user-id="${user.id}"]`);
    await page.waitForURL(`${h.url}/me?notice=connected`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Your availability');
    await expect(page.locator('#status h2').textContent()).resolves.toBe(user.name);

    feedUrl = await page.inputValue('[id^="feed-url-"]');
    expect(feedUrl).toMatch(new RegExp(`^${h.url}/feeds/[A-Za-z0-9_-]{43}\\.ics$`));
    const webcal = feedUrl.replace('http://', 'webcal://');
    await expect(page.inputValue('[id^="feed-webcal-"]')).resolves.toBe(webcal);
    await expect(page.locator(`a[href="${webcal}"]`).count()).resolves.toBe(1);
    await expect(
      page
        .locator(`a[href="https://calendar.google.com/calendar/render?cid=${encodeURIComponent(webcal)}"]`)
        .count(),
    ).resolves.toBe(1);
    await expect(
      page
        .locator(
          `a[href^="https://outlook.office.com/calendar/0/addfromweb?url=${encodeURIComponent(feedUrl)}&name="]`,
        )
        .count(),
    ).resolves.toBe(1);

    // The worker runs the sync the callback queued; a reload then shows the same URL and the preview draws the
    // feed's events, each at the times the feed gives in the account's zone.
    await waitFor(
      () => h.sync.db.prisma.connection.findFirst({ where: { email: user.email } }),
      (c) => c?.lastGoodSyncAt != null,
      { what: 'the first sync' },
    );
    await page.reload();
    await expect(page.inputValue('[id^="feed-url-"]')).resolves.toBe(feedUrl);
    await page.waitForSelector('#week-preview[data-ready="true"]', { timeout: patient(20_000) });
    const drawn = await page
      .locator('#week-preview .fc-event')
      .evaluateAll((events) => events.map((e) => e.getAttribute('title')));
    await expect(page.getAttribute('#week-preview', 'data-events')).resolves.toBe(String(drawn.length));
    const zone = (await page.getAttribute('#week-preview', 'data-time-zone'))!;
    const feed = ICAL.Component.fromString((await fetchInPage(feedUrl)).text);
    const local = (time: ICAL.Time) => DateTime.fromJSDate(time.toJSDate(), { zone }).toFormat('HH:mm');
    const inFeed = new Set(
      feed.getAllSubcomponents('vevent').map((vevent) => {
        const event = new ICAL.Event(vevent);
        return `${event.summary}, ${local(event.startDate)}–${local(event.endDate)}`;
      }),
    );
    for (const title of drawn) expect(inFeed).toContain(title);
  });

  it('opens the feed URL', async () => {
    const feed = await fetchInPage(feedUrl);
    expect(feed.status).toBe(200);
    expect(feed.type).toBe('text/calendar; charset=utf-8');
    assertStrictIcs(feed.text);
    expect(feed.text).toContain('BEGIN:VEVENT');
  });

  it('signs in to admin, rotates the feed token, and the old URL answers 404', async () => {
    const first = await page.goto(`${h.url}/admin`);
    expect(first?.status()).toBe(401);
    await page.fill('#token', ADMIN_TOKEN);
    await Promise.all([page.waitForURL(`${h.url}/admin`), page.click('main button[type="submit"]')]);
    await expect(page.locator('h1').textContent()).resolves.toBe('Connections');
    const row = page.locator('tr[data-connection-id]');
    await expect(row.count()).resolves.toBe(1);
    await expect(row.locator('td').nth(1).innerText()).resolves.toBe('active');

    // Rotating asks first: subscribers must subscribe again. Dismissed, nothing happens.
    const posts: string[] = [];
    const countPosts = (request: { method(): string; url(): string }) => {
      if (request.method() === 'POST') posts.push(request.url());
    };
    page.on('request', countPosts);
    page.once('dialog', (dialog) => void dialog.dismiss());
    // Playwright's click waits for a navigation the click starts, so a sent form would be seen here.
    await page.click('button[data-action="rotate"]');
    page.off('request', countPosts);
    expect(posts).toEqual([]);
    expect((await fetchInPage(feedUrl)).status).toBe(200);
    page.once('dialog', (dialog) => {
      expect(dialog.message()).toContain('subscribe again');
      void dialog.accept();
    });
    await Promise.all([
      page.waitForURL(/\/admin\/feeds\/.+\/rotate$/),
      page.click('button[data-action="rotate"]'),
    ]);
    await expect(page.locator('h1').textContent()).resolves.toBe('Feed URL replaced');
    const newUrl = await page.inputValue('#new-feed-url');
    expect(newUrl).not.toBe(feedUrl);

    const old = await fetchInPage(feedUrl);
    expect(old.status).toBe(404);
    const fresh = await fetchInPage(newUrl);
    expect(fresh.status).toBe(200);
    assertStrictIcs(fresh.text);
  });

  it('shows the queue dashboard to the signed-in administrator', async () => {
    // Under its CSP the board must still work, and ask nothing of another origin (Bull Board's template links
    // Google Fonts; queue-dashboard.ts takes that out).
    const refused: string[] = [];
    const elsewhere: string[] = [];
    const onConsole = (message: { text(): string }) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text());
    };
    const onRequest = (request: { url(): string }) => {
      if (!request.url().startsWith(h.url)) elsewhere.push(request.url());
    };
    page.on('console', onConsole);
    page.on('request', onRequest);
    try {
      const response = await page.goto(`${h.url}/admin/queues`);
      expect(response?.status()).toBe(200);
      expect(response?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
      await page.waitForSelector('text=sync', { timeout: patient(15_000) });
      await expect(page.title()).resolves.toContain('slotfeed queues');
      // The way back: the board's own menu carries a link to the admin page.
      const back = page.locator('a', { hasText: 'slotfeed admin' });
      if ((await back.count()) === 0 || !(await back.first().isVisible())) {
        await page.locator('header li:last-child button, header ul li:last-child button').last().click();
      }
      await expect(back.first().getAttribute('href')).resolves.toBe('/admin');
      expect(refused).toEqual([]);
      expect(elsewhere).toEqual([]);
    } finally {
      page.off('console', onConsole);
      page.off('request', onRequest);
    }
  });
});
