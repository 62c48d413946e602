// The report pages in Chromium (playwright-core, as test/web/browser.test.ts): over the known history, the
// availability page draws its uPlot chart with one point per day, the bookings page its weekday × hour heat
// map, and the CSV link downloads the same rows the CLI prints.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { launchTestBrowser, type TestBrowser } from '../support/browser.js';
import { ADMIN_TOKEN, createWebHarness, type WebHarness } from '../support/web-harness.js';
import { FakeClock } from '../support/sync-harness.js';
import { knownHistoryOptions, scriptKnownHistory, T0, T3, type KnownHistory } from './known-history.js';
import { patient } from '../support/patience.js';

let k: KnownHistory;
let web: WebHarness;
let context: BrowserContext;
let page: Page;
let browser: TestBrowser;

beforeAll(async () => {
  const clock = new FakeClock(new Date(T0));
  web = await createWebHarness('report_pages', knownHistoryOptions(clock));
  k = await scriptKnownHistory(web.sync, clock);
  browser = await launchTestBrowser({ acceptDownloads: true });
  ({ context, page } = browser);
  await context.setExtraHTTPHeaders({ authorization: `Bearer ${ADMIN_TOKEN}` });
}, patient(60_000));
afterAll(async () => {
  await browser?.close();
  await web?.close();
});

describe('report pages in Chromium', () => {
  it('availability: a uPlot chart of free minutes with one point per day', async () => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const response = await page.goto(
      `${web.url}/admin/reports/availability?connection=${k.berlin.connectionId}`,
    );
    expect(response?.status()).toBe(200);
    await page.waitForSelector('#chart[data-ready="true"]', { timeout: patient(10_000) });
    expect(errors).toEqual([]);
    // Mar 30, 31, Apr 1, Apr 2 as of T3 (the clock): 120, 180, 180, 180 free minutes.
    // Evaluated as text: the test compiles without DOM types.
    const data = await page.evaluate<number[][]>('window.slotfeedChart.data');
    expect(data[0]?.map((s) => new Date(s * 1000).toISOString().slice(0, 10))).toEqual([
      '2026-03-30',
      '2026-03-31',
      '2026-04-01',
      '2026-04-02',
    ]);
    expect(data[1]).toEqual([120, 180, 180, 180]);
    await expect(page.getAttribute('#chart', 'data-points')).resolves.toBe('4');
    // Drawn, not just configured: the plot canvas has a size and coloured pixels.
    const inked = await page.evaluate<number>(`(() => {
      const canvas = document.querySelector('#chart canvas');
      if (!canvas || canvas.width === 0) return 0;
      const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      let n = 0;
      for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) n++;
      return n;
    })()`);
    expect(inked).toBeGreaterThan(100);
    await expect(page.locator('#report-rows tbody tr').count()).resolves.toBe(4);
    expect(page.url()).toContain('/admin/reports/availability');
    expect(k.clock.now().toISOString()).toBe(T3);
  });

  it('bookings: a weekday × hour heat map of the booked slots, and a CSV download', async () => {
    await page.goto(`${web.url}/admin/reports/bookings?connection=${k.berlin.connectionId}`);
    await expect(page.locator('#heatmap td').count()).resolves.toBe(7 * 24);
    const booked = await page.$$eval('#heatmap td[data-bookings]:not([data-bookings="0"])', (cells) =>
      cells.map(
        (c) =>
          `${c.getAttribute('data-weekday')}/${c.getAttribute('data-hour')}=${c.getAttribute('data-bookings')}`,
      ),
    );
    expect(booked).toEqual(['1/0=1', '6/10=1', '7/0=1', '7/11=1']);

    const href = await page.getAttribute('#csv-link', 'href');
    expect(href).toBe(`/admin/reports/bookings/csv?connection=${k.berlin.connectionId}`);
    const response = await page.evaluate(async (url) => {
      const r = await fetch(url);
      return {
        status: r.status,
        type: r.headers.get('content-type'),
        disposition: r.headers.get('content-disposition'),
        text: await r.text(),
      };
    }, href!);
    expect(response).toMatchObject({ status: 200, type: 'text/csv; charset=utf-8' });
    expect(response.disposition).toBe('attachment; filename="slotfeed-bookings-20260330T060000.csv"');
    const csv = response.text;
    expect(csv.split('\r\n')[0]).toBe(
      'connection_id,connection,day,bookings,booked_minutes,median_lead_hours,mean_lead_hours,opened',
    );
    expect(csv.split('\r\n').filter((l) => l !== '')).toHaveLength(4);
  });

  it('on a phone: each row a card of labelled figures, and the whole heat map in sight', async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    try {
      await page.goto(`${web.url}/admin/reports/bookings?connection=${k.berlin.connectionId}`);
      // Nothing scrolls sideways: neither the page, nor the rows' box, nor the heat map's.
      const widths = await page.evaluate<{ page: number; boxes: [number, number][] }>(`({
        page: document.documentElement.scrollWidth,
        boxes: [...document.querySelectorAll('#report-rows, #heatmap')].map((t) => {
          const box = t.parentElement;
          return [box.scrollWidth, box.clientWidth];
        }),
      })`);
      expect(widths.page).toBeLessThanOrEqual(360);
      expect(widths.boxes).toHaveLength(2);
      for (const [scroll, client] of widths.boxes) expect(scroll).toBeLessThanOrEqual(client);
      // A row's figures each on one line beside its column's name (drawn before it), the headers out of sight.
      const cells = await page.evaluate<{ label: string; value: string; oneLine: boolean }[]>(`(() => {
        const headers = [...document.querySelectorAll('#report-rows thead th')].map((th) => th.textContent.trim());
        const row = document.querySelector('#report-rows tbody tr');
        return [...row.querySelectorAll('td')].map((td, i) => ({
          label: getComputedStyle(td, '::before').content === JSON.stringify(headers[i]) ? headers[i] : '',
          value: td.textContent.trim(),
          oneLine: td.getBoundingClientRect().height < 2.2 * parseFloat(getComputedStyle(td).lineHeight),
        }));
      })()`);
      // Every cell named by its own column's header (the bookings report has seven).
      expect(cells).toHaveLength(7);
      expect(cells.filter((c) => c.label === '')).toEqual([]);
      // The figures fit beside their names; the address may go whole to the line below.
      expect(cells.slice(1).filter((c) => !c.oneLine)).toEqual([]);
      expect((await page.locator('#report-rows thead').boundingBox())!.height).toBeLessThanOrEqual(1);
      // The latest hour is inside the page's width.
      const lastHour = await page.locator('#heatmap tbody tr:first-child td[data-hour="23"]').boundingBox();
      expect(lastHour!.x + lastHour!.width).toBeLessThanOrEqual(360);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('says what was wrong with a filter, on the page', async () => {
    const response = await page.goto(`${web.url}/admin/reports/utilization?from=2026-03-05&to=2026-03-01`);
    expect(response?.status()).toBe(400);
    await expect(page.locator('#report-error').textContent()).resolves.toMatch(/is after --to/);
  });
});
