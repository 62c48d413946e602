// "Write into my calendar (CalDAV)" on the owner's page and the admin's connection page, over real sockets against
// a real Radicale: a destination added with the page's form is written by the worker with the feed's events (read
// back by python3-caldav, not slotfeed's code); a refused password, an address that is no CalDAV server and one
// that cannot be reached are said as sentences with the form kept as typed but the password, and store nothing;
// the page's actions (pause, resume, push, reconcile, replace credentials, remove with or without the events) do
// what they say; another owner gets 404 for all of it; the password is in no page and no log line.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHostLimits } from '../../src/destinations/host-limits.js';
import { launchChromium } from '../support/browser.js';
import { eventsOf } from '../feeds/feed-fixtures.js';
import { readBack, startCalDavServer, type CalDavTestServer } from '../support/caldav-servers.js';
import type { FakeClock } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { ADMIN_TOKEN, createWebHarness, type WebHarness } from '../support/web-harness.js';
import { freeLoopbackPort } from '../../src/demo/free-port.js';
import { patient } from '../support/patience.js';

let server: CalDavTestServer;
let h: WebHarness;
const logLines: string[] = [];
let alice: { cookie: string; feedId: string; token: string; connectionId: string };
let bob: { cookie: string; feedId: string };

const WRONG_PASSWORD = 'not-the-password-4f1b2c';

beforeAll(async () => {
  server = await startCalDavServer('radicale');
  h = await createWebHarness('web_caldav_pages', {
    env: { CALDAV_ALLOW_PRIVATE_TARGETS: 'true', CALDAV_DISPATCH_INTERVAL_MS: '100' },
    logLines,
  });
  const owners = [];
  for (const user of h.sync.sim.users.slice(0, 2)) {
    const connected = await h.connectViaWeb(user.email);
    await h.syncNow(connected.connectionId);
    const feed = (await h.feeds.findByToken(connected.token!))!;
    owners.push({ ...connected, cookie: connected.ownerCookie, feedId: feed.id, token: connected.token! });
  }
  alice = owners[0]!;
  bob = owners[1]!;
  await h.sync.startRoles(['worker']);
}, patient(60_000));
afterAll(async () => {
  await h?.close();
  await server?.close();
});

const service = () => h.sync.services.caldavDestinations;

/** A POST from our own origin, as the page's forms send it. */
function post(path: string, cookie: string, form: Record<string, string> = {}) {
  return h.request('POST', path, {
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: h.url,
      accept: 'text/html',
      ...(cookie === 'admin' ? { authorization: `Bearer ${ADMIN_TOKEN}` } : { cookie }),
    },
    body: new URLSearchParams(form).toString(),
  });
}

const ownerPage = (cookie: string) => h.get('/me', { accept: 'text/html', cookie });

/** The HTML of one destination's item on a page. */
function itemOf(page: string, destinationId: string): string {
  const start = page.indexOf(`id="caldav-destination-${destinationId}"`);
  expect(start).toBeGreaterThan(-1);
  return page.slice(start, page.indexOf('</li>', page.indexOf('caldav-remove', start)));
}

/** The value a page's input with this id holds. */
const valueOf = (page: string, id: string) =>
  new RegExp(`id="${id}"[^>]*?value="([^"]*)"`, 's').exec(page)?.[1] ?? null;

const settled = (destinationId: string) =>
  waitFor(
    () => service().get(destinationId),
    (d) => d.pendingChanges === 0 && d.reconcileRequestedAt === null && d.lastPushAt !== null,
    { what: `destination ${destinationId} pushed` },
  );

/** The feed's events by UID as its .ics shows them, and slotfeed's events in the calendar as Radicale has them. */
async function feedUids(token: string) {
  const ics = await h.get(`/feeds/${token}.ics`);
  return eventsOf(ics.text)
    .map((event) => event.get('UID')!)
    .sort();
}
async function calendarUids(calendarUrl: string, feedId: string) {
  return (await readBack(server, calendarUrl))
    .filter((event) => event.marker === feedId)
    .map((event) => event.uid)
    .sort();
}

const addForm = (overrides: Record<string, string> = {}) => ({
  serverUrl: server.baseUrl,
  username: server.username,
  password: server.password,
  calendarName: '',
  ...overrides,
});

describe('the owner adds a calendar on /me', () => {
  let destinationId: string;

  it('a wrong password: the page says the server refused it, keeps what was typed but the password, and stores nothing', async () => {
    const page = await post(
      `/me/feeds/${alice.feedId}/caldav`,
      alice.cookie,
      addForm({ password: WRONG_PASSWORD, calendarName: 'Work free time' }),
    );
    expect(page.status).toBe(400);
    const alert = /id="caldav-add-[^"]+-error"[^>]*>([^<]*)</.exec(page.text)?.[1] ?? '';
    expect(alert).toContain('The server refused this user name and password');
    expect(valueOf(page.text, `caldav-add-${alice.feedId}-server`)).toBe(server.baseUrl);
    expect(valueOf(page.text, `caldav-add-${alice.feedId}-username`)).toBe(server.username);
    expect(valueOf(page.text, `caldav-add-${alice.feedId}-calendar`)).toBe('Work free time');
    expect(valueOf(page.text, `caldav-add-${alice.feedId}-password`)).toBeNull();
    expect(page.text).not.toContain(WRONG_PASSWORD);
    // The rest of the page is there as usual: the owner is still on "Your availability".
    expect(page.text).toContain('Your availability');
    expect(await service().list({ feedId: alice.feedId })).toEqual([]);
  });

  it('an address with no CalDAV server, and one that cannot be reached, are each said plainly', async () => {
    const notCalDav = await post(
      `/me/feeds/${alice.feedId}/caldav`,
      alice.cookie,
      addForm({ serverUrl: `${h.url}/` }),
    );
    expect(notCalDav.status).toBe(400);
    expect(notCalDav.text).toContain('No CalDAV server was found at that address');
    const closed = `http://127.0.0.1:${await freeLoopbackPort()}/`;
    const unreachable = await post(
      `/me/feeds/${alice.feedId}/caldav`,
      alice.cookie,
      addForm({ serverUrl: closed }),
    );
    expect(unreachable.status).toBe(502);
    expect(unreachable.text).toContain('The server could not be reached');
    expect(valueOf(unreachable.text, `caldav-add-${alice.feedId}-server`)).toBe(closed);
    expect(await service().list({ feedId: alice.feedId })).toEqual([]);
  });

  it('the right one: the destination is listed as active and the worker writes the feed’s events into the calendar', async () => {
    const added = await post(`/me/feeds/${alice.feedId}/caldav`, alice.cookie, addForm());
    expect(added.status).toBe(303);
    expect(added.headers.location).toBe(`/me?notice=caldav-added#caldav-${alice.feedId}`);
    const [destination] = await service().list({ feedId: alice.feedId });
    destinationId = destination!.id;
    expect(destination).toMatchObject({ state: 'active', calendarName: 'Free time (slotfeed)' });

    await settled(destinationId);
    const expected = await feedUids(alice.token);
    expect(expected.length).toBeGreaterThan(3);
    expect(await calendarUids(destination!.calendarUrl, alice.feedId)).toEqual(expected);

    const page = await h.get(String(added.headers.location), { accept: 'text/html', cookie: alice.cookie });
    expect(page.text).toContain('Calendar added');
    const item = itemOf(page.text, destinationId);
    expect(item).toContain('data-state="active"');
    expect(item).toContain('Free time (slotfeed)');
    expect(item).toMatch(/Last push<\/dt>\s*<dd>\s*<time/);
    expect(item).toMatch(/Changes to push<\/dt>\s*<dd>none<\/dd>/);
    expect(page.text).not.toContain(server.password);
  });

  it('pause, resume, push now and reconcile now change its state as the page says', async () => {
    const paused = await post(`/me/caldav/${destinationId}/pause`, alice.cookie);
    expect(paused.headers.location).toBe(`/me?notice=caldav-paused#caldav-${alice.feedId}`);
    let item = itemOf((await ownerPage(alice.cookie)).text, destinationId);
    expect(item).toContain('data-state="paused"');
    expect(item).toContain('data-action="resume"');
    expect(item).not.toContain('data-action="push"');
    // A stale page's push on a paused destination is refused, in words.
    const refused = await post(`/me/caldav/${destinationId}/push`, alice.cookie);
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('is paused: resume it first');

    await post(`/me/caldav/${destinationId}/resume`, alice.cookie);
    item = itemOf((await ownerPage(alice.cookie)).text, destinationId);
    expect(item).toContain('data-state="active"');
    const pushed = await post(`/me/caldav/${destinationId}/push`, alice.cookie);
    expect(pushed.headers.location).toBe(`/me?notice=caldav-pushed#caldav-${alice.feedId}`);
    const reconciled = await post(`/me/caldav/${destinationId}/reconcile`, alice.cookie);
    expect(reconciled.headers.location).toBe(`/me?notice=caldav-reconciled#caldav-${alice.feedId}`);
    const done = await settled(destinationId);
    expect(done.lastReconciledAt).not.toBeNull();
  });

  it('replacing credentials with a wrong password is refused in words and changes nothing; the right ones are taken', async () => {
    const before = await service().get(destinationId);
    const refused = await post(`/me/caldav/${destinationId}/credentials`, alice.cookie, {
      username: server.username,
      password: WRONG_PASSWORD,
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(
      new RegExp(`id="caldav-credentials-${destinationId}-error"[^>]*>\\s*The server refused this user name`),
    );
    expect(refused.text).not.toContain(WRONG_PASSWORD);
    expect(await service().get(destinationId)).toEqual(before);
    const taken = await post(`/me/caldav/${destinationId}/credentials`, alice.cookie, {
      username: server.username,
      password: server.password,
    });
    expect(taken.headers.location).toBe(`/me?notice=caldav-credentials#caldav-${alice.feedId}`);
    await settled(destinationId);
  });

  it('another owner gets 404 for each action on it and for adding to the feed, and does not see it', async () => {
    const before = await service().get(destinationId);
    for (const action of ['push', 'reconcile', 'pause', 'resume', 'remove']) {
      const answer = await post(`/me/caldav/${destinationId}/${action}`, bob.cookie, {
        deleteEvents: 'true',
      });
      expect([action, answer.status]).toEqual([action, 404]);
    }
    const credentials = await post(`/me/caldav/${destinationId}/credentials`, bob.cookie, {
      username: 'mallory',
      password: WRONG_PASSWORD,
    });
    expect(credentials.status).toBe(404);
    expect((await post(`/me/feeds/${alice.feedId}/caldav`, bob.cookie, addForm())).status).toBe(404);
    // An unknown id answers the same.
    expect((await post(`/me/caldav/${crypto.randomUUID()}/pause`, bob.cookie)).status).toBe(404);
    expect((await ownerPage(bob.cookie)).text).not.toContain(destinationId);
    expect(await service().get(destinationId)).toEqual(before);
    expect(await service().list({ feedId: alice.feedId })).toHaveLength(1);
  });

  it('removing it takes it off at once; a worker deletes the events it wrote, even from a server out of reach at the time, and the page says so meanwhile', async () => {
    const { calendarUrl } = await service().get(destinationId);
    await server.stop();
    try {
      const removed = await post(`/me/caldav/${destinationId}/remove`, alice.cookie, {
        deleteEvents: 'true',
      });
      expect(removed.headers.location).toBe(`/me?notice=caldav-removed#caldav-${alice.feedId}`);
      expect(await service().list({ feedId: alice.feedId })).toEqual([]);
      const page = (await ownerPage(alice.cookie)).text;
      expect(page).toMatch(/<h2>Leaving calendars<\/h2>/);
      expect(page).toContain(`data-cleanup-id="${destinationId}"`);
      // The worker tried, and could not reach the server.
      const [failed] = await waitFor(
        () => service().cleanups({ connectionId: alice.connectionId }),
        ([cleanup]) => (cleanup?.attempts ?? 0) >= 1,
        { what: 'a first try of the cleanup' },
      );
      expect(failed!.lastError).toMatch(/could not reach the server/);
      expect(await service().list({ feedId: alice.feedId })).toEqual([]);
    } finally {
      await server.start();
    }
    // Tried again after its backoff: the harness's clock moves past it.
    const [left] = await service().cleanups({ connectionId: alice.connectionId });
    (h.sync.clock as FakeClock).set(left!.retryAt!.toISOString());
    await waitFor(
      () => service().cleanups({ connectionId: alice.connectionId }),
      (cleanups) => cleanups.length === 0,
      { what: 'the cleanup done' },
    );
    expect(await calendarUids(calendarUrl, alice.feedId)).toEqual([]);
    expect((await ownerPage(alice.cookie)).text).not.toContain(destinationId);
  });

  it('the form’s remove button asks to delete the events unless unticked; unticked leaves them in the calendar', async () => {
    await post(`/me/feeds/${alice.feedId}/caldav`, alice.cookie, addForm({ calendarName: 'Kept' }));
    const [destination] = await service().list({ feedId: alice.feedId });
    await settled(destination!.id);
    const item = itemOf((await ownerPage(alice.cookie)).text, destination!.id);
    expect(item).toMatch(/name="deleteEvents"\s+value="true"\s+checked/);
    // An unticked checkbox is not sent at all.
    const removed = await post(`/me/caldav/${destination!.id}/remove`, alice.cookie);
    expect(removed.headers.location).toBe(`/me?notice=caldav-removed-kept#caldav-${alice.feedId}`);
    expect(await calendarUids(destination!.calendarUrl, alice.feedId)).toEqual(await feedUids(alice.token));
  });

  it('a calendar added again while its removed destination’s cleanup is under way: the new destination says it waits, and writes the feed once the cleanup is done', async () => {
    await post(`/me/feeds/${alice.feedId}/caldav`, alice.cookie, addForm({ calendarName: 'Again' }));
    const first = (await service().list({ feedId: alice.feedId })).find((d) => d.calendarName === 'Again')!;
    await settled(first.id);
    await server.stop();
    try {
      await post(`/me/caldav/${first.id}/remove`, alice.cookie, { deleteEvents: 'true' });
      await waitFor(
        () => service().cleanup(first.id),
        (cleanup) => (cleanup?.attempts ?? 0) >= 1,
        { what: 'a first try of the cleanup' },
      );
    } finally {
      await server.start();
    }
    const added = await post(
      `/me/feeds/${alice.feedId}/caldav`,
      alice.cookie,
      addForm({ calendarName: 'Again' }),
    );
    expect(added.headers.location).toBe(`/me?notice=caldav-added-waiting#caldav-${alice.feedId}`);
    const told = await h.get(added.headers.location!.split('#')[0]!, {
      accept: 'text/html',
      cookie: alice.cookie,
    });
    expect(told.text).toContain('once it has deleted those of the destination removed from it');
    const second = (await service().list({ feedId: alice.feedId })).find((d) => d.calendarName === 'Again')!;
    expect(second.calendarUrl).toBe(first.calendarUrl);
    // Said on its item, above its facts (the log keeps saying it waited).
    const waiting = /class="warning small caldav-waits">\s*This destination waits until slotfeed has deleted/;
    expect(itemOf((await ownerPage(alice.cookie)).text, second.id)).toMatch(waiting);

    (h.sync.clock as FakeClock).set((await service().cleanup(first.id))!.retryAt!.toISOString());
    await waitFor(
      () => service().cleanup(first.id),
      (cleanup) => cleanup === null,
      { what: 'the cleanup done' },
    );
    await settled(second.id);
    expect(await calendarUids(second.calendarUrl, alice.feedId)).toEqual(await feedUids(alice.token));
    expect(itemOf((await ownerPage(alice.cookie)).text, second.id)).not.toMatch(waiting);
    await service().remove(second.id, { keepEvents: true });
  });

  it('no log line carries a password', () => {
    const logged = logLines.join('\n');
    expect(logged).toContain('owner added a CalDAV destination');
    expect(logged).not.toContain(server.password);
    expect(logged).not.toContain(WRONG_PASSWORD);
  });
});

describe('a server that asked slotfeed to wait (a 429 or 503 with Retry-After to a push)', () => {
  it('the owner’s own actions there are tried at once, not queued behind the hold: adding, new credentials, resuming, a cleanup’s new credentials', async () => {
    const { redis, caldavQueue } = h.sync.clients;
    const host = new URL(server.baseUrl).host;
    const keyPrefix = `${h.sync.redis.prefix}:caldav-host`;
    // The host held back as a push's 503 holds it: for every worker, for 75 s.
    const hosts = createHostLimits(redis, { concurrency: 4, perSecond: 0, slotTimeoutMs: 60_000, keyPrefix });
    await hosts.holdBack(host, 75_000);
    const credentials = { username: server.username, password: server.password };
    let destinationId: string | undefined;
    try {
      const added = await post(
        `/me/feeds/${alice.feedId}/caldav`,
        alice.cookie,
        addForm({ calendarName: 'Held' }),
      );
      expect([added.status, added.headers.location]).toEqual([
        303,
        `/me?notice=caldav-added#caldav-${alice.feedId}`,
      ]);
      const held = (await service().list({ feedId: alice.feedId })).find((d) => d.calendarName === 'Held');
      destinationId = held!.id;

      const replaced = await post(`/me/caldav/${destinationId}/credentials`, alice.cookie, credentials);
      expect(replaced.headers.location).toBe(`/me?notice=caldav-credentials#caldav-${alice.feedId}`);
      await post(`/me/caldav/${destinationId}/pause`, alice.cookie);
      // Resuming asks the server whether the calendar is still there.
      const resumed = await post(`/me/caldav/${destinationId}/resume`, alice.cookie);
      expect(resumed.headers.location).toBe(`/me?notice=caldav-resumed#caldav-${alice.feedId}`);

      // The cleanup the removal leaves waits for the host in the worker; the person's new credentials do not.
      await post(`/me/caldav/${destinationId}/remove`, alice.cookie, { deleteEvents: 'true' });
      const given = await post(`/me/caldav-cleanups/${destinationId}/credentials`, alice.cookie, credentials);
      expect(given.status).toBe(303);
      expect(await service().cleanup(destinationId)).not.toBeNull();
    } finally {
      await redis.del(`${keyPrefix}:rate:${host}:paused-until`);
      for (const job of await caldavQueue.getDelayed()) await job.promote();
    }
    await waitFor(
      () => service().cleanups({ connectionId: alice.connectionId }),
      (cleanups) => cleanups.length === 0,
      { what: 'the cleanup done once the hold is over' },
    );
  });
});

describe('the admin’s connection page', () => {
  it('adds a calendar to a connection’s feed, shows it with its state, and removes it', async () => {
    const refused = await post(
      `/admin/feeds/${bob.feedId}/caldav`,
      'admin',
      addForm({ password: WRONG_PASSWORD, calendarName: 'Front desk' }),
    );
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('The server refused this user name and password');
    expect(valueOf(refused.text, `caldav-add-${bob.feedId}-calendar`)).toBe('Front desk');
    expect(refused.text).not.toContain(WRONG_PASSWORD);
    expect(await service().list({ feedId: bob.feedId })).toEqual([]);

    const bobConnection = (await h.feeds.get(bob.feedId)).connectionId!;
    const added = await post(
      `/admin/feeds/${bob.feedId}/caldav`,
      'admin',
      addForm({ calendarName: 'Front desk' }),
    );
    expect(added.status).toBe(303);
    expect(added.headers.location).toBe(
      `/admin/connections/${bobConnection}?notice=caldav-added#caldav-${bob.feedId}`,
    );
    const [destination] = await service().list({ feedId: bob.feedId });
    await settled(destination!.id);

    const paused = await post(`/admin/caldav/${destination!.id}/pause`, 'admin');
    expect(paused.status).toBe(303);
    expect(paused.headers.location).toBe(
      `/admin/connections/${bobConnection}?notice=caldav-paused#caldav-${bob.feedId}`,
    );
    const page = await h.get(String(paused.headers.location), {
      accept: 'text/html',
      authorization: `Bearer ${ADMIN_TOKEN}`,
    });
    expect(page.text).toContain('Paused: nothing is written into that calendar until you resume.');
    const item = itemOf(page.text, destination!.id);
    expect(item).toContain('data-state="paused"');
    expect(item).toContain('Front desk');
    // The owner sees the destination the admin added, in the state the admin left it.
    expect(itemOf((await ownerPage(bob.cookie)).text, destination!.id)).toContain('data-state="paused"');

    const removed = await post(`/admin/caldav/${destination!.id}/remove`, 'admin', { deleteEvents: 'true' });
    expect(removed.headers.location).toBe(
      `/admin/connections/${bobConnection}?notice=caldav-removed#caldav-${bob.feedId}`,
    );
    await waitFor(
      () => service().cleanups(),
      (cleanups) => cleanups.every((c) => c.id !== destination!.id),
      { what: 'the cleanup done' },
    );
    expect(await calendarUids(destination!.calendarUrl, bob.feedId)).toEqual([]);
  });
});

describe('in a browser on a phone', () => {
  it(
    'the form folded away on the card adds nothing with a wrong password, and the page opens on the reason',
    async () => {
      const browser = await launchChromium();
      try {
        const context = await browser.newContext({ viewport: { width: 360, height: 800 }, isMobile: true });
        const [name, value] = alice.cookie.split('=') as [string, string];
        await context.addCookies([{ name, value, url: h.url }]);
        const tab = await context.newPage();
        await tab.goto(`${h.url}/me`);
        const section = tab.locator(`#caldav-${alice.feedId}`);
        await section.locator('summary').first().click();
        await section.getByLabel('Server address').fill(server.baseUrl);
        await section.getByLabel('User name').last().fill(server.username);
        await section.getByLabel('App password').last().fill(WRONG_PASSWORD);
        await section.getByRole('button', { name: 'Check and add' }).click();
        const alert = tab.locator(`#caldav-add-${alice.feedId}-error`);
        await alert.waitFor();
        expect(await alert.textContent()).toContain('The server refused this user name and password');
        // Focused, so the page is scrolled to it and a screen reader reads it first.
        expect(await tab.evaluate('document.activeElement.id')).toBe(`caldav-add-${alice.feedId}-error`);
        expect(await alert.isVisible()).toBe(true);
        expect(await section.getByLabel('Server address').inputValue()).toBe(server.baseUrl);
        expect(await section.getByLabel('App password').last().inputValue()).toBe('');
        expect(await service().list({ feedId: alice.feedId })).toEqual([]);
      } finally {
        await browser.close();
      }
    },
    patient(60_000),
  );
});
