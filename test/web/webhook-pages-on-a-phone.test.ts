// The admin's "API and webhooks" page and the owner's webhooks on a phone (390 and 360 px wide), in Chromium,
// as their reader sees them: an API key's id reads as one piece (not broken into bits of five to seven
// characters), and every button of a key or an endpoint is wholly on the screen, none hidden in a box the
// reader would have to scroll sideways to find it; in an endpoint's delivery log, each delivery's event reads
// whole and how it went (its state, status and error) is in sight.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createApiKeyStore } from '../../src/store/api-keys.js';
import { createTeamStore } from '../../src/store/teams.js';
import { launchChromium } from '../support/browser.js';
import { ADMIN_TOKEN, createWebHarness, type WebHarness } from '../support/web-harness.js';
import { patient } from '../support/patience.js';

let h: WebHarness;
let browser: Browser;
let admin: BrowserContext;
let owner: BrowserContext;

beforeAll(async () => {
  h = await createWebHarness('web_webhook_pages_phone', { simulator: { users: 1 } });
  const connected = await h.connectViaWeb(h.sync.sim.users[0]!.email);
  const team = await createTeamStore(h.sync.db.prisma).create('Front desk');
  await createApiKeyStore(h.sync.db.prisma).create({
    label: 'Front desk dashboard',
    connectionIds: [connected.connectionId],
    teamIds: [team.id],
  });
  for (const owner of [{ teamId: team.id }, { connectionId: connected.connectionId }]) {
    const { endpoint } = await h.sync.stores.webhooks.create({
      owner,
      url: 'https://hooks.example.com/front-desk/availability-changes',
    });
    // A disabled one has every button there is: enable again, send a test event, delete.
    await h.sync.db.prisma.webhookEndpoint.update({
      where: { id: endpoint.id },
      data: { disabledAt: h.sync.clock.now(), disabledReason: 'every delivery failed for 24 h' },
    });
    // Its log: a delivery that failed, handed over and given up (no worker runs here).
    await h.sync.db.prisma.webhookDelivery.create({
      data: {
        id: randomUUID(),
        endpointId: endpoint.id,
        eventType: 'availability.changed',
        payload: {},
        createdAt: h.sync.clock.now(),
        enqueuedAt: h.sync.clock.now(),
        givenUpAt: h.sync.clock.now(),
        attempts: 15,
        lastStatus: 503,
        lastLatencyMs: 41,
        lastError: 'answered 503',
      },
    });
  }
  browser = await launchChromium();
  admin = await browser.newContext();
  const page = await admin.newPage();
  await page.goto(`${h.url}/admin/login`);
  await page.fill('#token', ADMIN_TOKEN);
  await Promise.all([page.waitForURL(`${h.url}/admin`), page.click('main button[type="submit"]')]);
  await page.close();
  owner = await browser.newContext();
  const [name, value] = connected.ownerCookie.split('=') as [string, string];
  await owner.addCookies([{ name, value, url: h.url }]);
}, patient(60_000));
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

// Runs in the page (a string: the project's TypeScript has no DOM types). For each element `selector` finds:
// the lines its text takes, and whether it is wholly visible: inside the window and inside every box around it
// that clips (a box scrolled sideways hides what is past its edge).
const LAYOUT_SCRIPT = (selector: string) => `(() => {
  const clipped = (element) => {
    const rect = element.getBoundingClientRect();
    if (rect.left < 0 || rect.right > window.innerWidth + 0.5) return true;
    for (let box = element.parentElement; box && box !== document.body; box = box.parentElement) {
      if (getComputedStyle(box).overflowX === 'visible') continue;
      const edge = box.getBoundingClientRect();
      if (rect.left < edge.left - 0.5 || rect.right > edge.right + 0.5) return true;
    }
    return false;
  };
  return [...document.querySelectorAll(${JSON.stringify(selector)})].map((element) => ({
    text: element.textContent.trim(),
    lines: new Set([...element.getClientRects()].map((r) => Math.round(r.top))).size,
    clipped: clipped(element),
  }));
})()`;

interface Laid {
  text: string;
  lines: number;
  clipped: boolean;
}

async function laidOut(context: BrowserContext, path: string, width: number, selector: string) {
  const tab: Page = await context.newPage();
  try {
    await tab.setViewportSize({ width, height: 800 });
    const response = await tab.goto(`${h.url}${path}`);
    expect(response?.status()).toBe(200);
    // The owner's webhooks are folded away until opened.
    await tab.evaluate('document.querySelectorAll("details").forEach((d) => { d.open = true; })');
    return (await tab.evaluate(LAYOUT_SCRIPT(selector))) as Laid[];
  } finally {
    await tab.close();
  }
}

describe.each([390, 360])('at %d px', (width) => {
  it('the admin page shows each API key’s id on one line', async () => {
    const ids = await laidOut(admin, '/admin/api', width, '[data-key-id] code');
    expect(ids).toHaveLength(1);
    expect(ids.map((id) => ({ text: id.text, lines: id.lines, clipped: id.clipped }))).toEqual([
      { text: expect.stringMatching(/^[0-9a-f-]{36}$/), lines: 1, clipped: false },
    ]);
  });

  it('the admin page shows every button of a key or an endpoint whole', async () => {
    const buttons = await laidOut(
      admin,
      '/admin/api',
      width,
      '[data-key-id] button, [data-endpoint-id] button',
    );
    expect(buttons.map((b) => b.text).sort()).toEqual(
      [
        'Delete',
        'Delete',
        'Enable again',
        'Enable again',
        'Revoke',
        'Send test event',
        'Send test event',
      ].sort(),
    );
    expect(buttons.filter((b) => b.clipped || b.lines > 1)).toEqual([]);
  });

  it('the owner’s page shows every button of an endpoint whole', async () => {
    const buttons = await laidOut(owner, '/me', width, '#webhooks [data-endpoint-id] button');
    expect(buttons.map((b) => b.text)).toEqual(['Send test event', 'Delete']);
    expect(buttons.filter((b) => b.clipped || b.lines > 1)).toEqual([]);
  });

  it.each([
    ['the admin page', () => admin, '/admin/api'],
    ['the owner’s page', () => owner, '/me'],
  ] as const)('%s shows each delivery’s event whole and how it went', async (_page, context, path) => {
    const log = '[data-delivery-id]';
    const events = await laidOut(context(), path, width, `${log} code`);
    expect(events.length).toBeGreaterThan(0);
    expect(events.filter((e) => e.text !== 'availability.changed' || e.lines > 1 || e.clipped)).toEqual([]);
    // Its state, the receiver's last status and the error: the cells that say how it went.
    const outcome = (await laidOut(context(), path, width, `${log} td`)).filter((cell) =>
      ['given up', '503', 'answered 503'].includes(cell.text),
    );
    expect(outcome).toHaveLength(3 * events.length);
    expect(outcome.filter((cell) => cell.clipped)).toEqual([]);
  });
});
