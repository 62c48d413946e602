// The OAuth callback under attack: missing, forged, malformed, expired and replayed `state`; a wrong code, an
// expired code, another flow's code, and a code issued for another redirect URI. Every one is a 400 page,
// and nothing is stored: no connection, no feed, no sync enqueued, and (for the replay) the first grant's
// tokens untouched and still working, because the replayed code is never sent to the token endpoint.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { FakeClock } from '../support/sync-harness.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { reservePort } from '../support/reserved-port.js';

const OTHER_REDIRECT_URI = 'http://127.0.0.1:9/another-app/callback';
let h: WebHarness;

beforeAll(async () => {
  // The simulator must also know a second redirect URI (another registered app of the same client), so the
  // app's own port is fixed before the harness starts it.
  const port = await reservePort();
  const origin = `http://127.0.0.1:${port}`;
  h = await createWebHarness('sec_oauth', {
    webEnv: { WEB_PORT: String(port), PUBLIC_BASE_URL: origin },
    env: { CALENDBOOK_REDIRECT_URI: `${origin}/oauth/callback` },
    simulator: { redirectUris: [`${origin}/oauth/callback`, OTHER_REDIRECT_URI] },
  });
});
afterAll(async () => {
  await h?.close();
});

interface Stored {
  connections: number;
  feeds: number;
  enqueued: number;
  tokenCalls: number;
}

async function stored(): Promise<Stored> {
  const prisma = h.sync.db.prisma;
  return {
    connections: await prisma.connection.count(),
    feeds: await prisma.feed.count(),
    enqueued: h.enqueued.length,
    tokenCalls: h.sync.sim.control.callCounts()['POST /oauth2/token'] ?? 0,
  };
}

let before: Stored;
beforeEach(async () => {
  before = await stored();
});

/** A 400 page that says to start again, and nothing stored; `exchanged` when the code reached Calendbook. */
async function expectRefused(callbackUrl: string, exchanged: boolean) {
  const page = await h.get(callbackUrl, { accept: 'text/html' });
  expect(page.status).toBe(400);
  expect(page.text).toContain('start again at /connect');
  const after = await stored();
  expect({ ...after, tokenCalls: undefined }).toEqual({ ...before, tokenCalls: undefined });
  expect(after.tokenCalls - before.tokenCalls).toBe(exchanged ? 1 : 0);
  return page;
}

const email = (i: number) => h.sync.sim.users[i]!.email;
const callbackWith = (params: Record<string, string>) =>
  `/oauth/callback?${new URLSearchParams(params).toString()}`;

/** A code and state from a real consent for user i, not yet delivered. */
async function approvedCallback(i: number): Promise<URL> {
  return new URL(await h.approve(await h.startConnect(email(i))));
}

describe('state', () => {
  it('missing: refused even with a valid code', async () => {
    const callback = await approvedCallback(0);
    await expectRefused(callbackWith({ code: callback.searchParams.get('code')! }), false);
  });

  it('forged: a well-formed state that was never issued', async () => {
    const callback = await approvedCallback(0);
    await expectRefused(
      callbackWith({ code: callback.searchParams.get('code')!, state: 'A'.repeat(43) }),
      false,
    );
  });

  it('malformed: too long, odd characters, repeated', async () => {
    const callback = await approvedCallback(0);
    const code = callback.searchParams.get('code')!;
    await expectRefused(callbackWith({ code, state: 'A'.repeat(500) }), false);
    await expectRefused(callbackWith({ code, state: '../../oauth-state/*' }), false);
    const state = callback.searchParams.get('state')!;
    await expectRefused(`/oauth/callback?code=${code}&state=${state}&state=${state}`, false);
  });

  it('expired: Redis let it go after its lifetime', async () => {
    const callback = await approvedCallback(0);
    const key = `${h.sync.redis.prefix}:oauth-state:${callback.searchParams.get('state')}`;
    expect(await h.sync.redis.connection.exists(key)).toBe(1);
    await h.sync.redis.connection.pexpire(key, 1);
    while ((await h.sync.redis.connection.exists(key)) === 1) await new Promise((r) => setTimeout(r, 5));
    await expectRefused(callback.toString(), false);
  });

  it('replayed: the second delivery is refused without spending the code again', async () => {
    const callback = await approvedCallback(1);
    const first = await h.get(callback.toString(), { accept: 'text/html' });
    expect(first.status).toBe(303);
    expect(first.headers.location).toBe('/me?notice=connected');
    const connection = await h.sync.db.prisma.connection.findFirstOrThrow({ where: { email: email(1) } });
    before = await stored();
    await expectRefused(callback.toString(), false);
    const after = await h.sync.db.prisma.connection.findUniqueOrThrow({ where: { id: connection.id } });
    expect(after.accessTokenSealed).toBe(connection.accessTokenSealed);
    expect(after.refreshTokenSealed).toBe(connection.refreshTokenSealed);
    // A replayed code reaching the token endpoint would have revoked the grant (RFC 6749 §10.5): it did not.
    await h.syncNow(connection.id);
    const synced = await h.sync.db.prisma.connection.findUniqueOrThrow({ where: { id: connection.id } });
    expect(synced.status).toBe('active');
    expect(synced.lastSyncOutcome).toBe('succeeded');
  });

  it('spent by an error answer too: a later callback with that state is refused', async () => {
    const callback = await approvedCallback(0);
    const state = callback.searchParams.get('state')!;
    await expectRefused(callbackWith({ error: 'access_denied', state }), false);
    await expectRefused(callback.toString(), false);
  });
});

describe('code', () => {
  it('wrong: a made-up code under a valid state', async () => {
    const callback = await approvedCallback(0);
    const page = await expectRefused(
      callbackWith({ code: 'x'.repeat(43), state: callback.searchParams.get('state')! }),
      true,
    );
    expect(page.text).not.toContain('x'.repeat(43));
  });

  it('expired: past its 60 s on the Calendbook clock', async () => {
    const callback = await approvedCallback(0);
    (h.sync.clock as FakeClock).advance(61);
    await expectRefused(callback.toString(), true);
  });

  it("another flow's code: the PKCE verifier of this state does not match it", async () => {
    const mine = await approvedCallback(0);
    const theirs = await approvedCallback(2);
    await expectRefused(
      callbackWith({ code: theirs.searchParams.get('code')!, state: mine.searchParams.get('state')! }),
      true,
    );
  });

  it('a code issued for another redirect URI, delivered here with a valid state', async () => {
    // The attacker starts a flow here (for its state and PKCE challenge) but has the code sent elsewhere.
    const authorization = new URL(await h.startConnect(email(0)));
    const state = authorization.searchParams.get('state')!;
    authorization.searchParams.set('redirect_uri', OTHER_REDIRECT_URI);
    const elsewhere = new URL(await h.approve(authorization.toString()));
    expect(`${elsewhere.origin}${elsewhere.pathname}`).toBe(OTHER_REDIRECT_URI);
    await expectRefused(callbackWith({ code: elsewhere.searchParams.get('code')!, state }), true);
  });
});
