// A team feed from the administrator's form to a member's week preview, in Chromium at a phone's width: the
// administrator makes a team of three connected accounts and its feed on /admin/teams; a member signs in,
// finds the team feed on their own page and previews it; every drawn event is one of the feed's own VEVENTs,
// at the feed's times in the member's zone.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import ICAL from 'ical.js-v2';
import { DateTime } from 'luxon';
import type { Page } from 'playwright-core';
import { launchTestBrowser, type TestBrowser } from '../support/browser.js';
import { assertStrictIcs } from '../support/ics-checks.js';
import { ADMIN_TOKEN, createWebHarness, type WebHarness } from '../support/web-harness.js';
import { patient } from '../support/patience.js';

/** Simulated users whose working hours overlap (see team-feeds.test.ts). */
const MEMBER_USERS = [0, 2, 3];

let h: WebHarness;
let browser: TestBrowser;
let page: Page;
let memberEmails: string[];

beforeAll(async () => {
  h = await createWebHarness('web_team_browser', { simulator: { users: 4 } });
  memberEmails = MEMBER_USERS.map((i) => h.sync.sim.users[i]!.email);
  for (const email of memberEmails) {
    const connected = await h.connectViaWeb(email);
    await h.syncNow(connected.connectionId);
  }
  browser = await launchTestBrowser();
  ({ page } = browser);
  await page.setViewportSize({ width: 390, height: 844 });
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

/** Submits the form holding `button` and waits for the page the answer leads to. */
async function submit(button: string, url: RegExp | string): Promise<void> {
  await Promise.all([page.waitForURL(url), page.click(button)]);
}

describe('a team feed in the browser', () => {
  let teamFeedUrl: string;

  it('is made by the administrator on the teams page', async () => {
    await page.goto(`${h.url}/admin/login`);
    await page.fill('#token', ADMIN_TOKEN);
    await submit('main button[type="submit"]', `${h.url}/admin`);
    await page.click('nav >> text=Teams');
    await page.waitForURL(`${h.url}/admin/teams`);
    await page.fill('#team-name', 'Support rota');
    await submit('#new-team button[type="submit"]', /notice=team-created/);
    const team = page.locator('section[data-team-id]', { hasText: 'Support rota' });
    for (const email of memberEmails) {
      await team.locator('input[name="connection"]').fill(email);
      await submit('section[data-team-id] form.inline-form button[type="submit"]', /notice=member-added/);
    }
    await expect(team.locator('li[data-connection-id]').count()).resolves.toBe(3);
    await team.locator('summary', { hasText: 'New team feed' }).click();
    await team.locator('select[name="mode"]').selectOption('any');
    await submit('section[data-team-id] form[action$="/feeds"] button[type="submit"]', /\/feeds$/);
    await expect(page.locator('h1').textContent()).resolves.toBe('Feed created');
    teamFeedUrl = await page.inputValue('#new-feed-url');
    expect(teamFeedUrl).toMatch(new RegExp(`^${h.url}/feeds/[A-Za-z0-9_-]{43}\\.ics$`));
  });

  it('is on a member’s own page, and their week preview draws it from its URL', async () => {
    const member = h.sync.sim.users[MEMBER_USERS[1]!]!;
    await page.goto(`${h.url}/signin`);
    await page.click(`button[data-user-id="${member.id}"]`);
    await page.waitForURL(/\/me\?notice=signed-in/);
    const teamFeed = page.locator('#teams .team-feed');
    await expect(teamFeed.locator('input[id^="feed-url-"]').inputValue()).resolves.toBe(teamFeedUrl);
    await submit('#teams .team-feed a[data-preview-feed]', /\/me\?preview=/);
    await page.waitForSelector('#week-preview[data-ready="true"]', { timeout: patient(20_000) });
    await expect(page.getAttribute('#week-preview', 'data-feed')).resolves.toBe(
      new URL(teamFeedUrl).pathname,
    );

    const text = await page.evaluate(
      async (url) => (await fetch(url, { cache: 'no-store' })).text(),
      teamFeedUrl,
    );
    assertStrictIcs(text);
    const zone = (await page.getAttribute('#week-preview', 'data-time-zone'))!;
    const local = (time: ICAL.Time) => DateTime.fromJSDate(time.toJSDate(), { zone }).toFormat('HH:mm');
    const inFeed = new Set(
      ICAL.Component.fromString(text)
        .getAllSubcomponents('vevent')
        .map((vevent) => {
          const event = new ICAL.Event(vevent);
          return `${event.summary}, ${local(event.startDate)}–${local(event.endDate)}`;
        }),
    );
    const drawn = await page
      .locator('#week-preview .fc-event')
      .evaluateAll((events) => events.map((e) => e.getAttribute('title')));
    expect(drawn.length).toBeGreaterThan(0);
    for (const title of drawn) expect(inFeed).toContain(title);
    // Who is free, as the team feed says it: "2 of 3 free" and the like.
    expect(drawn.every((title) => /^[123] of 3 free, /.test(title ?? ''))).toBe(true);
    // Nothing on the page is wider than the phone (a string: the project's TypeScript has no DOM types).
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
  });
});
