// Share links on the owner's page (issue 37), over real sockets: the owner makes one with a label and an
// expiry, sees its address again with a QR code and when it was last opened, and revokes it; the page stops
// opening at once. Another owner cannot touch it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { NOT_ORIGINS } from '../support/not-origins.js';
import type { FakeClock } from '../support/sync-harness.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';

let h: WebHarness;
let cookie: string;
let otherCookie: string;
let feedId: string;

function post(path: string, asCookie: string, form: Record<string, string> = {}) {
  return h.request('POST', path, {
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: h.url,
      cookie: asCookie,
      accept: 'text/html',
    },
    body: new URLSearchParams(form).toString(),
  });
}
const ownerPage = (asCookie: string) => h.get('/me', { accept: 'text/html', cookie: asCookie });
const SHARE_URL = /value="(http:\/\/[^"]+\/share\/([A-Za-z0-9_-]{43}))"/g;

beforeAll(async () => {
  h = await createWebHarness('web_share_owner', { simulator: { users: 2 } });
  const [ada, bob] = h.sync.sim.users;
  const connected = await h.connectViaWeb(ada!.email);
  await h.syncNow(connected.connectionId);
  cookie = connected.ownerCookie;
  feedId = (await h.feeds.findByToken(connected.token!))!.id;
  otherCookie = (await h.connectViaWeb(bob!.email)).ownerCookie;
});
afterAll(async () => {
  await h?.close();
});

describe('share links on /me', () => {
  let secret: string;

  it('are made with a label and an expiry, and shown again with their address and a QR code', async () => {
    const made = await post(`/me/feeds/${feedId}/share-links`, cookie, {
      label: 'For the Acme interview',
      expires: 'days',
      days: '7',
      date: '',
      origins: 'https://blog.example.com',
    });
    expect(made.status).toBe(303);
    expect(made.headers.location).toBe(`/me?notice=share-created#share-links-${feedId}`);
    const page = await h.get(String(made.headers.location), { accept: 'text/html', cookie });
    expect(page.text).toContain('Share link made');
    expect(page.text).toContain('For the Acme interview');
    expect(page.text).toMatch(/Expires\s*<time datetime="2026-03-09T09:00:00.000Z">/);
    expect(page.text).toContain('not opened yet');
    expect(page.text).toContain('may be embedded from https://blog.example.com');
    expect(page.text).toContain('aria-label="QR code of the share link For the Acme interview"');
    const urls = [...page.text.matchAll(SHARE_URL)];
    expect(urls).toHaveLength(1);
    secret = urls[0]![2]!;
    expect((await h.get(new URL(urls[0]![1]!).pathname)).status).toBe(200);
  });

  it('say when they were last opened', async () => {
    (h.sync.clock as FakeClock).advance(3600);
    await h.get(`/share/${secret}`);
    const page = await ownerPage(cookie);
    expect(page.text).toMatch(/last opened\s*<time datetime="2026-03-02T10:00:00.000Z">/);
  });

  it('refuse a date that has passed, or an origin that is not one, with the reason', async () => {
    const past = await post(`/me/feeds/${feedId}/share-links`, cookie, {
      label: 'old',
      expires: 'date',
      date: '2026-03-01',
    });
    expect(past.status).toBe(400);
    expect(past.text).toContain('has passed already');
    const path = await post(`/me/feeds/${feedId}/share-links`, cookie, {
      label: 'bad origin',
      origins: 'https://blog.example.com/some/page',
    });
    expect(path.status).toBe(400);
    expect(path.text).toContain('is not an origin');
  });

  it('refuse a host that is no host name (a wildcard, a semicolon, a quote), naming it; commas only separate', async () => {
    const before = (await h.deps.shareLinks.list({ feedIds: [feedId] })).length;
    for (const value of NOT_ORIGINS.filter((v) => !v.includes(','))) {
      const made = await post(`/me/feeds/${feedId}/share-links`, cookie, {
        label: 'embedded',
        origins: value,
      });
      expect(made.status).toBe(400);
      expect(made.text).toContain('is not an origin');
      expect(made.text).toContain(value.replace("'", '&#39;'));
    }
    expect(await h.deps.shareLinks.list({ feedIds: [feedId] })).toHaveLength(before);
    // In the form a comma is a separator (as a new line is): two origins, and no comma reaches the CSP.
    const two = await post(`/me/feeds/${feedId}/share-links`, cookie, {
      label: 'two blogs',
      origins: 'https://a.example,https://b.example',
    });
    expect(two.status).toBe(303);
    const [link] = (await h.deps.shareLinks.list({ feedIds: [feedId] })).filter(
      (l) => l.label === 'two blogs',
    );
    expect(link?.frameAncestors).toEqual(['https://a.example', 'https://b.example']);
    await h.deps.shareLinks.revoke(link!.id, (h.sync.clock as FakeClock).now());
  });

  it('are not another owner’s to make or revoke', async () => {
    expect((await post(`/me/feeds/${feedId}/share-links`, otherCookie, { label: 'mine now' })).status).toBe(
      404,
    );
    const [link] = await h.deps.shareLinks.list({ feedIds: [feedId] });
    expect((await post(`/me/share-links/${link!.id}/revoke`, otherCookie)).status).toBe(404);
    expect((await h.get(`/share/${secret}`)).status).toBe(200);
  });

  it('are revoked by their owner, and the page stops opening at once', async () => {
    const [link] = await h.deps.shareLinks.list({ feedIds: [feedId] });
    const revoked = await post(`/me/share-links/${link!.id}/revoke`, cookie);
    expect(revoked.headers.location).toBe(`/me?notice=share-revoked#share-links-${feedId}`);
    expect((await h.get(`/share/${secret}`)).status).toBe(404);
    expect((await ownerPage(cookie)).text).not.toContain('<strong>For the Acme interview</strong>');
  });
});
