// The administrator's connection page on a phone (360 px), in Chromium, as its reader sees it: the chart's
// title reads whole above the chart, the chart stays inside its card (it ran past it, and its title was cut),
// and each sync run is one compact row (a table of eight columns made rows some 190 px tall and scrolled
// sideways), a page of them at a time.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext } from 'playwright-core';
import { RUNS_PER_PAGE } from '../../src/web/admin/admin-connection-page.js';
import { launchChromium } from '../support/browser.js';
import { patient } from '../support/patience.js';
import { ADMIN_TOKEN, createWebHarness, type WebHarness } from '../support/web-harness.js';

let h: WebHarness;
let browser: Browser;
let phone: BrowserContext;
let connectionId: string;

beforeAll(async () => {
  h = await createWebHarness('web_admin_connection_phone', { simulator: { users: 1 } });
  ({ connectionId } = await h.connectViaWeb(h.sync.sim.users[0]!.email));
  await h.syncNow(connectionId);
  const base = h.sync.clock.now().getTime();
  await h.sync.db.prisma.syncRun.createMany({
    data: Array.from({ length: 30 }, (_, i) => ({
      connectionId,
      outcome: 'succeeded',
      startedAt: new Date(base - (i + 1) * 600_000),
      finishedAt: new Date(base - (i + 1) * 600_000 + 2300),
      upstreamCalls: 14,
      bands: h.sync.config.sync.bands.map((band) => band.name),
      slotsOpened: 3,
      slotsClosed: 12,
    })),
  });
  browser = await launchChromium();
  phone = await browser.newContext({ viewport: { width: 360, height: 800 }, isMobile: true, hasTouch: true });
  await phone.setExtraHTTPHeaders({ authorization: `Bearer ${ADMIN_TOKEN}` });
}, patient(60_000));
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

interface Box {
  left: number;
  right: number;
  top: number;
  bottom: number;
}

describe('the admin connection page at 360 px', () => {
  it('shows the chart inside its card, under a title that reads whole', async () => {
    const page = await phone.newPage();
    await page.goto(`${h.url}/admin/connections/${connectionId}`);
    await page.waitForSelector('#chart[data-ready="true"]', { timeout: patient(10_000) });
    const layout = (await page.evaluate(`(() => {
      const box = (el) => { const r = el.getBoundingClientRect(); return { left: r.left, right: r.right, top: r.top, bottom: r.bottom }; };
      const title = document.getElementById('chart-title');
      return {
        card: box(document.getElementById('chart').closest('.card')),
        plot: box(document.querySelector('#chart .uplot')),
        title: title ? { ...box(title), text: title.textContent.trim(), cut: title.scrollWidth > title.clientWidth } : null,
        pageWidth: document.documentElement.scrollWidth,
      };
    })()`)) as {
      card: Box;
      plot: Box;
      title: (Box & { text: string; cut: boolean }) | null;
      pageWidth: number;
    };
    await page.close();
    expect(layout.pageWidth).toBeLessThanOrEqual(360);
    expect(layout.plot.left).toBeGreaterThanOrEqual(layout.card.left);
    expect(layout.plot.right).toBeLessThanOrEqual(layout.card.right);
    expect(layout.title).toMatchObject({ text: 'Open slots, the last 28 days', cut: false });
    expect(layout.title!.right).toBeLessThanOrEqual(layout.card.right);
  });

  it('lists a page of runs, each one compact row', async () => {
    const page = await phone.newPage();
    await page.goto(`${h.url}/admin/connections/${connectionId}`);
    const rows = (await page.evaluate(`[...document.querySelectorAll('#runs > li')].map((li) => {
      const r = li.getBoundingClientRect();
      return { height: r.height, right: r.right, lineHeight: parseFloat(getComputedStyle(li).lineHeight) || 24 };
    })`)) as { height: number; right: number; lineHeight: number }[];
    await page.close();
    expect(rows).toHaveLength(RUNS_PER_PAGE);
    for (const row of rows) {
      expect(row.right).toBeLessThanOrEqual(360);
      // Its time, outcome and figures, and the bands it pulled: three lines at most on a phone.
      expect(row.height).toBeLessThanOrEqual(3 * row.lineHeight + 16);
    }
  });
});
