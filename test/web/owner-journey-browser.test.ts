// The owner's journey in Chromium at a phone's width, as a person takes it: connect, land on their page, reload
// (the URL is still there), make a feed of one event type, replace its address, revoke it, then delete
// everything and be signed out. Each destructive step asks first; the answers are checked against the server.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { launchTestBrowser, type TestBrowser } from '../support/browser.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';

let h: WebHarness;
let browser: TestBrowser;
let page: Page;

beforeAll(async () => {
  h = await createWebHarness('web_owner_journey');
  browser = await launchTestBrowser();
  ({ page } = browser);
  await page.setViewportSize({ width: 390, height: 844 });
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

const status = async (url: string) => (await h.get(url)).status;
const feedUrls = () =>
  page
    .locator('[id^="feed-url-"]')
    .evaluateAll((inputs) => inputs.map((i) => (i as unknown as { value: string }).value));

/**
 * Submits the form of `button` after accepting its confirmation, which must say `warning`, and waits for the page
 * it lands on. `landsOn` must not match the page it starts from: a URL already matched is not waited for, and the
 * page would be read while the form's answer is still on its way.
 */
async function confirmAndSubmit(button: string, warning: RegExp, landsOn: RegExp): Promise<void> {
  expect(page.url()).not.toMatch(landsOn);
  let asked = '';
  page.once('dialog', (dialog) => {
    asked = dialog.message();
    void dialog.accept();
  });
  await Promise.all([page.waitForURL(landsOn), page.click(button)]);
  expect(asked).toMatch(warning);
}

describe('the owner, in a phone-sized browser', () => {
  it('connects, reloads, makes, replaces and revokes a feed, then deletes their data', async () => {
    const user = h.sync.sim.users[1]!;
    await page.goto(`${h.url}/`);
    await Promise.all([page.waitForURL(/\/login/), page.click('#connect')]);
    await page.click(`button[data-user-id="${user.id}"]`);
    await page.waitForURL(`${h.url}/me?notice=connected`);
    const connection = await h.sync.db.prisma.connection.findFirstOrThrow({ where: { email: user.email } });
    await h.syncNow(connection.id);

    const [defaultUrl] = await feedUrls();
    await page.reload();
    expect(await feedUrls()).toEqual([defaultUrl]);

    // A feed of one event type.
    await page.click('#new-feed summary');
    const eventType = await page.locator('#new-feed-event option').nth(1);
    const eventTitle = (await eventType.textContent())!.trim();
    await page.selectOption('#new-feed-event', { label: eventTitle });
    await page.selectOption('#new-feed-view', 'slots');
    await page.fill('#new-feed-label', 'Intro calls');
    await Promise.all([page.waitForURL(/notice=feed-created/), page.click('#create-feed')]);
    const urls = await feedUrls();
    expect(urls).toHaveLength(2);
    const eventUrl = urls[1]!;
    expect(await status(eventUrl)).toBe(200);
    const card = page.locator('section[data-feed-id]').nth(1);
    const feedId = (await card.getAttribute('data-feed-id'))!;
    await expect(card.locator('h3').textContent()).resolves.toBe('Intro calls');

    // Replace its address: asked first, the old URL answers 404, the page shows the new one.
    await confirmAndSubmit(`#rotate-${feedId}`, /subscribe again/, /\/me\?notice=rotated/);
    const replaced = (await feedUrls())[1]!;
    expect(replaced).not.toBe(eventUrl);
    expect(await status(eventUrl)).toBe(404);
    expect(await status(replaced)).toBe(200);

    // Its share form asks for days or a date only when the expiry chosen reads one.
    await card.locator('details:has(.share-link-form) > summary').click();
    const form = card.locator('.share-link-form');
    const shown = async () => ({
      days: await form.locator('input[name="days"]').isVisible(),
      date: await form.locator('input[name="date"]').isVisible(),
    });
    expect(await shown()).toEqual({ days: false, date: false });
    await form.locator('select[name="expires"]').selectOption('days');
    expect(await shown()).toEqual({ days: true, date: false });
    await form.locator('select[name="expires"]').selectOption('date');
    expect(await shown()).toEqual({ days: false, date: true });

    // Revoke it.
    await confirmAndSubmit(`#revoke-${feedId}`, /stops working for good/, /\/me\?notice=revoked/);
    expect(await status(replaced)).toBe(404);
    expect(await feedUrls()).toEqual([defaultUrl]);

    // Delete everything: gone from the database, the feed URL dead, signed out.
    await confirmAndSubmit('#delete-my-data', /cannot be undone/, /\/deleted(\?|#|$)/);
    await expect(page.locator('h1').textContent()).resolves.toBe('Your data is deleted');
    expect(await h.sync.db.prisma.connection.count({ where: { id: connection.id } })).toBe(0);
    expect(await h.sync.db.prisma.slot.count({ where: { connectionId: connection.id } })).toBe(0);
    expect(await h.sync.db.prisma.feed.count({ where: { connectionId: connection.id } })).toBe(0);
    expect(await status(defaultUrl!)).toBe(404);
    await page.goto(`${h.url}/me`);
    await expect(page.locator('#sign-in').count()).resolves.toBe(1);
    expect(await feedUrls()).toEqual([]);
  });
});
