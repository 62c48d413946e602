// The admin's "API and webhooks" page and the owner's webhooks, over HTTP: a key made on the page works
// against the API until revoked; an endpoint made on the page (for a team, by its name) shows its secret once;
// a disabled endpoint says why and can be enabled again; an owner adds and deletes their own endpoints, and
// private targets are refused with the switch off (the default).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTeamStore } from '../../src/store/teams.js';
import { ADMIN_TOKEN, createWebHarness, type WebHarness } from '../support/web-harness.js';

let h: WebHarness;
let connectionId: string;
let email: string;
let ownerCookie: string;
const logLines: string[] = [];
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };

beforeAll(async () => {
  h = await createWebHarness('web_admin_api', { simulator: { users: 2 }, logLines });
  email = h.sync.sim.users[0]!.email;
  const connected = await h.connectViaWeb(email);
  connectionId = connected.connectionId;
  ownerCookie = connected.ownerCookie;
  await h.syncNow(connectionId);
});
afterAll(async () => {
  await h?.close();
});

const form = (fields: [string, string][]) => new URLSearchParams(fields).toString();
const adminPost = (path: string, fields: [string, string][] = []) =>
  h.request('POST', path, {
    headers: { ...bearer, 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    body: form(fields),
  });
const ownerPost = (path: string, fields: [string, string][] = []) =>
  h.request('POST', path, {
    headers: {
      cookie: ownerCookie,
      origin: h.url,
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'text/html',
    },
    body: form(fields),
  });
const shownSecret = (text: string) => /id="new-secret" type="text" readonly value="([^"]+)"/.exec(text)?.[1];
const apiPage = () => h.get('/admin/api', { ...bearer, accept: 'text/html' });

describe('API keys on the admin page', () => {
  it('made with a scope by e-mail, shown once, working until revoked', async () => {
    const made = await adminPost('/admin/api/keys', [
      ['label', 'CRM sync'],
      ['connections', email.toUpperCase()],
    ]);
    expect(made.status).toBe(200);
    const key = shownSecret(made.text)!;
    expect(key).toMatch(/^sfk_[\w-]{43}$/);
    const url = `/api/v1/connections/${connectionId}/event-types`;
    expect((await h.get(url, { authorization: `Bearer ${key}` })).status).toBe(200);
    const page = await apiPage();
    expect(page.text).toContain('CRM sync');
    expect(page.text).toContain(email);
    expect(page.text).not.toContain(key);
    const id = /data-key-id="([0-9a-f-]{36})"/.exec(page.text)![1]!;
    const revoked = await adminPost(`/admin/api/keys/${id}/revoke`);
    expect(revoked.headers.location).toBe('/admin/api?notice=key-revoked');
    expect((await h.get(url, { authorization: `Bearer ${key}` })).status).toBe(401);
  });

  it('refuses a key without a scope, or naming nobody', async () => {
    const none = await adminPost('/admin/api/keys', [['label', 'Nothing']]);
    expect(none.status).toBe(400);
    expect(none.text).toContain('An API key must be scoped to at least one connection or team.');
    const nobody = await adminPost('/admin/api/keys', [
      ['label', 'Nobody'],
      ['connections', 'nobody@example.test'],
    ]);
    expect(nobody.status).toBe(400);
    expect(nobody.text).toContain('No connection has the id or e-mail address');
  });
});

describe('webhook endpoints on the admin page', () => {
  it('for a team by its name: the secret once, the endpoint listed with its events', async () => {
    const team = await createTeamStore(h.sync.db.prisma).create('Ops');
    // A public address: this harness keeps the default, which refuses private ones.
    const made = await adminPost('/admin/api/webhooks', [
      ['owner', 'Ops'],
      ['url', 'https://hooks.example.com/slotfeed'],
      ['events', 'booking.inferred'],
      ['events', 'connection.needs_reauth'],
    ]);
    expect(made.status).toBe(200);
    const secret = shownSecret(made.text)!;
    expect(secret).toMatch(/^whsec_/);
    const endpoint = await h.sync.db.prisma.webhookEndpoint.findFirstOrThrow({ where: { teamId: team.id } });
    expect(endpoint.events).toEqual(['booking.inferred', 'connection.needs_reauth']);
    expect(endpoint.secretSealed).not.toContain(secret.slice(6));
    const page = await apiPage();
    expect(page.text).toContain('team Ops');
    expect(page.text).not.toContain(secret);
  });

  it('refuses a private target, and says so', async () => {
    const refused = await adminPost('/admin/api/webhooks', [
      ['owner', email],
      ['url', 'http://127.0.0.1:8080/hook'],
    ]);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('Private, loopback and link-local addresses are refused');
  });

  it('a disabled endpoint says why on the page, and can be enabled again', async () => {
    const { endpoint } = await h.sync.stores.webhooks.create({
      owner: { connectionId },
      url: 'https://hooks.example.com/broken',
    });
    await h.sync.db.prisma.webhookEndpoint.update({
      where: { id: endpoint.id },
      data: { disabledAt: new Date(), disabledReason: 'every delivery failed for 24 h' },
    });
    const page = await apiPage();
    expect(page.text).toMatch(/data-disabled-notice[\s\S]*every delivery failed for 24 h/);
    const enabled = await adminPost(`/admin/api/webhooks/${endpoint.id}/enable`);
    expect(enabled.headers.location).toBe('/admin/api?notice=endpoint-enabled');
    expect((await h.sync.stores.webhooks.get(endpoint.id)).disabledAt).toBeNull();
    const deleted = await adminPost(`/admin/api/webhooks/${endpoint.id}/delete`);
    expect(deleted.headers.location).toBe('/admin/api?notice=endpoint-deleted');
    expect(await h.sync.db.prisma.webhookEndpoint.count({ where: { id: endpoint.id } })).toBe(0);
  });
});

describe('webhooks on the owner’s page', () => {
  it('an owner adds one (secret once), sees it, and deletes it; not another’s', async () => {
    const added = await ownerPost('/me/webhooks', [['url', 'https://hooks.example.com/mine']]);
    expect(added.status).toBe(200);
    expect(shownSecret(added.text)).toMatch(/^whsec_/);
    const page = await h.get('/me', { cookie: ownerCookie, accept: 'text/html' });
    const id = /data-endpoint-id="([0-9a-f-]{36})"/.exec(page.text)![1]!;
    expect(page.text).toContain('https://hooks.example.com/mine');

    const stranger = await h.connectViaWeb(h.sync.sim.users[1]!.email);
    const foreign = await h.request('POST', `/me/webhooks/${id}/delete`, {
      headers: {
        cookie: stranger.ownerCookie,
        origin: h.url,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: '',
    });
    expect(foreign.status).toBe(404);
    expect((await ownerPost(`/me/webhooks/${id}/delete`)).headers.location).toBe(
      '/me?notice=webhook-deleted#webhooks',
    );
    expect(await h.sync.db.prisma.webhookEndpoint.count({ where: { id } })).toBe(0);
  });

  it('refuses a private target for an owner too', async () => {
    const refused = await ownerPost('/me/webhooks', [['url', 'http://192.168.1.10/hook']]);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('Private, loopback and link-local addresses are refused');
  });
});

describe('secrets', () => {
  it('no key or signing secret shown on a page is in any log line', async () => {
    const key = shownSecret(
      (
        await adminPost('/admin/api/keys', [
          ['label', 'Logged?'],
          ['connections', email],
        ])
      ).text,
    )!;
    await h.get(`/api/v1/connections/${connectionId}/event-types`, { authorization: `Bearer ${key}` });
    const secret = shownSecret(
      (
        await adminPost('/admin/api/webhooks', [
          ['owner', email],
          ['url', 'https://hooks.example.com/logs'],
        ])
      ).text,
    )!;
    expect(logLines.length).toBeGreaterThan(0);
    for (const line of logLines) {
      expect(line).not.toContain(key.slice(4));
      expect(line).not.toContain(secret.slice(6));
    }
  });
});
