// A realistic site for looking at in a browser: the web role on a real socket (web-harness.ts: real Postgres,
// Redis, the simulator), a worker running the syncs the pages queue, two simulated accounts connected through
// the web flow and synced so the pages have data, and Chromium with a signed-in context per kind of visitor.
// The two accounts are a team with a feed of its own; the owner's feed is written into CalDAV calendars in every
// state a destination can be in. Used by the in-browser page checks and by scripts/screenshots.ts, so both see the same site.
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { launchChromium } from './browser.js';
import { ADMIN_HOME, type SiteFacts, type SitePage, type SiteViewport, type Viewer } from './site-pages.js';
import { randomUUID } from 'node:crypto';
import { createApiKeyStore } from '../../src/store/api-keys.js';
import { createTeamStore } from '../../src/store/teams.js';
import { addDestinationsInEachState } from './prepared-caldav-destinations.js';
import { ADMIN_TOKEN, createWebHarness, type WebHarness } from './web-harness.js';
import { patient } from './patience.js';

/** Accounts connected before any page is shown; the first is the owner who signs in. */
const PREPARED_ACCOUNTS = 2;
// Every visit of the "not connected" sign-in page spends an account never connected before: enough for a few
// visits per run of the checks or the screenshots.
const SIMULATED_ACCOUNTS = 16;

export interface PreparedSite extends SiteFacts {
  harness: WebHarness;
  /** The site's origin, e.g. http://127.0.0.1:41234. */
  url: string;
  browser: Browser;
  /** The owner's e-mail address at Calendbook. */
  ownerEmail: string;
  /**
   * A fresh tab at `viewport`, in the context of `viewer` on that kind of device (signed in on first use, then
   * kept): a phone's context is a mobile one, so a page is laid out as a phone's browser lays it out.
   */
  openTab(viewer: Viewer, viewport: SiteViewport): Promise<Page>;
  /** Opens `sitePage` in `tab` and waits until it has drawn itself; the response of its document. */
  visit(tab: Page, sitePage: SitePage): Promise<Response>;
  signInAsAdmin(page: Page): Promise<void>;
  signInAsOwner(page: Page): Promise<void>;
  close(): Promise<void>;
}

export async function prepareSite(label: string): Promise<PreparedSite> {
  const harness = await createWebHarness(label, { simulator: { users: SIMULATED_ACCOUNTS } });
  let browser: Browser | undefined;
  try {
    await harness.sync.startRoles(['worker']);
    const users = harness.sync.sim.users;
    let feedToken: string | undefined;
    let connectionId: string | undefined;
    for (const user of users.slice(0, PREPARED_ACCOUNTS)) {
      const connected = await harness.connectViaWeb(user.email);
      await harness.syncNow(connected.connectionId);
      connectionId ??= connected.connectionId;
      feedToken ??= connected.token ?? undefined;
    }
    if (connectionId === undefined || feedToken === undefined) throw new Error('no account was connected');
    // The prepared accounts make a team with a feed, so the teams pages have something to show.
    const teams = createTeamStore(harness.sync.db.prisma);
    const team = await teams.create('Front desk');
    const connected = await harness.sync.db.prisma.connection.findMany({ select: { id: true } });
    await teams.addMembers(
      team.id,
      connected.map((c) => c.id),
    );
    const teamFeedId = (await harness.feeds.createTeamFeed({ teamId: team.id, options: { mode: 'any' } }))
      .feed.id;
    // An API key and a webhook endpoint (with a delivery that failed), so the API page has rows to show.
    await createApiKeyStore(harness.sync.db.prisma).create({
      label: 'Front desk dashboard',
      connectionIds: [connectionId],
      teamIds: [team.id],
    });
    const { endpoint } = await harness.sync.stores.webhooks.create({
      owner: { teamId: team.id },
      url: 'https://hooks.example.com/front-desk',
    });
    await harness.sync.db.prisma.webhookDelivery.create({
      data: {
        id: randomUUID(),
        endpointId: endpoint.id,
        eventType: 'booking.inferred',
        payload: {},
        createdAt: harness.sync.clock.now(),
        // Handed over and given up already: the worker this site runs must not try to deliver it.
        enqueuedAt: harness.sync.clock.now(),
        givenUpAt: harness.sync.clock.now(),
        attempts: 2,
        lastStatus: 503,
        lastLatencyMs: 41,
        lastError: 'answered 503',
      },
    });
    // CalDAV destinations in every state on the owner's feed, so /me and the admin's connection page show them.
    const ownerFeed = await harness.feeds.findByToken(feedToken);
    if (ownerFeed === undefined) throw new Error('the owner’s feed was not found by its token');
    await addDestinationsInEachState(
      harness.sync.stores.caldavDestinations,
      harness.sync.stores.caldavCleanups,
      ownerFeed.id,
      harness.sync.clock.now(),
    );
    // A share link of the owner's feed, and one that has expired, for the share pages.
    const shareLinks = harness.deps.shareLinks;
    const now = harness.sync.clock.now();
    const shareSecret = (
      await shareLinks.create({
        feedId: ownerFeed.id,
        label: 'For the Acme interview',
        expiresAt: null,
        now,
      })
    ).secret;
    const expiredShareSecret = (
      await shareLinks.create({
        feedId: ownerFeed.id,
        label: 'Last week',
        expiresAt: new Date(now.getTime() - 1000),
        now,
      })
    ).secret;
    await moveDatabaseDatesToClock(harness);
    browser = await launchChromium();
    return sitePreparedWith(harness, browser, {
      connectionId,
      feedToken,
      teamFeedId,
      ownerEmail: users[0]!.email,
      shareSecret,
      expiredShareSecret,
    });
  } catch (thrown: unknown) {
    await browser?.close();
    await harness.close();
    throw thrown;
  }
}

/**
 * The site runs on an injected clock, but rows whose `created_at` the database filled in carry its real time,
 * and pages would call a feed made a moment ago "since … (in 8 months)". Shifted by the gap between the two
 * clocks, so their order and spacing stay as they were.
 */
async function moveDatabaseDatesToClock(harness: WebHarness): Promise<void> {
  const clockNow = harness.sync.clock.now();
  const prisma = harness.sync.db.prisma;
  // Share links are made at the app's clock already.
  for (const table of ['connection', 'feed', 'team', 'api_key', 'webhook_endpoint'] as const) {
    await prisma.$executeRawUnsafe(
      `UPDATE ${table} SET created_at = created_at - (now() - $1::timestamptz)`,
      clockNow,
    );
  }
}

// Runs in the page (a string: the project's TypeScript has no DOM types): fills the form's fields by name and
// sends it as its submit button would.
const SUBMIT_SCRIPT = `({ form, fields }) => {
  const element = document.querySelector(form);
  if (element === null) throw new Error('no form ' + form);
  for (const [name, value] of Object.entries(fields)) element.elements.namedItem(name).value = value;
  element.requestSubmit();
}`;

function sitePreparedWith(
  harness: WebHarness,
  browser: Browser,
  facts: {
    connectionId: string;
    feedToken: string;
    teamFeedId: string;
    ownerEmail: string;
    shareSecret: string;
    expiredShareSecret: string;
  },
): PreparedSite {
  const url = harness.url;
  const unconnected = harness.sync.sim.users.slice(PREPARED_ACCOUNTS);
  // By viewer and viewport: whether a context is a mobile one is fixed when it is made.
  const contexts = new Map<string, Promise<BrowserContext>>();

  const site: PreparedSite = {
    ...facts,
    harness,
    url,
    browser,
    async newSignInCallbackPath() {
      const user = unconnected.shift();
      if (user === undefined) throw new Error(`all ${SIMULATED_ACCOUNTS} simulated accounts are used`);
      const start = await harness.get(`/signin?login_hint=${encodeURIComponent(user.email)}`);
      const callback = new URL(await harness.approve(String(start.headers.location)));
      return `${callback.pathname}${callback.search}`;
    },
    async consentPageUrl() {
      return harness.startConnect();
    },
    async visit(tab, sitePage) {
      const path = await sitePage.path(site);
      const ready = async () => {
        if (sitePage.readyWhen !== undefined)
          await tab.waitForSelector(sitePage.readyWhen, { timeout: patient(20_000) });
      };
      const response = await tab.goto(/^https?:/.test(path) ? path : `${url}${path}`);
      if (response === null) throw new Error(`${sitePage.name}: no response`);
      await ready();
      if (sitePage.submit === undefined) return response;
      const [answer] = await Promise.all([
        tab.waitForResponse((r) => r.request().isNavigationRequest() && r.request().method() === 'POST'),
        tab.evaluate(`(${SUBMIT_SCRIPT})(${JSON.stringify(sitePage.submit)})`),
      ]);
      await tab.waitForLoadState('load');
      await ready();
      return answer;
    },
    async signInAsAdmin(page) {
      await page.goto(`${url}/admin/login`);
      await page.fill('#token', ADMIN_TOKEN);
      await Promise.all([page.waitForURL(`${url}${ADMIN_HOME}`), page.click('main button[type="submit"]')]);
    },
    // Sign in with Calendbook: the simulator approves a login_hint at once, and the flow ends on /me.
    async signInAsOwner(page) {
      await page.goto(`${url}/signin?login_hint=${encodeURIComponent(facts.ownerEmail)}`);
      await page.waitForURL((target) => target.origin === url && target.pathname === '/me');
    },
    openTab(viewer, viewport) {
      const key = `${viewer} ${viewport.label}`;
      let context = contexts.get(key);
      if (context === undefined) {
        context = contextFor(viewer, viewport);
        contexts.set(key, context);
      }
      return context.then((ready) => ready.newPage());
    },
    async close() {
      try {
        await browser.close();
      } finally {
        await harness.close();
      }
    },
  };

  async function contextFor(viewer: Viewer, viewport: SiteViewport): Promise<BrowserContext> {
    const context = await browser.newContext({
      viewport: { width: viewport.width, height: viewport.height },
      isMobile: viewport.mobile,
      hasTouch: viewport.mobile,
    });
    if (viewer === 'public') return context;
    const page = await context.newPage();
    await (viewer === 'admin' ? site.signInAsAdmin(page) : site.signInAsOwner(page));
    await page.close();
    return context;
  }

  return site;
}
