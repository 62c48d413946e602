// Where the CalDAV client may connect, and what it does when a server does not answer. The same policy as webhook
// targets: a CalDAV URL is chosen by whoever connects a calendar, so a private, loopback or link-local one would
// let them make slotfeed call into the network it runs in (SSRF), and it carries a password, so not in clear.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { hostname } from 'node:os';
import ipaddr from 'ipaddr.js';
import {
  CalDavTargetError,
  CalDavTimeoutError,
  openCalDavAccount,
  type CalDavAccountOptions,
} from '../../src/caldav/index.js';
import { credentialScope } from '../../src/caldav/target-policy.js';

const PASSWORD = 'correct horse battery staple';

function recordingFetch() {
  const calls: string[] = [];
  const fetchSpy: typeof fetch = (input) => {
    calls.push(String(input));
    return Promise.reject(new Error('the test stops at the first request'));
  };
  return { calls, fetchSpy };
}

async function refusal(options: Partial<CalDavAccountOptions>) {
  const { calls, fetchSpy } = recordingFetch();
  const error = await openCalDavAccount({
    serverUrl: 'https://caldav.example.com/',
    username: 'alice',
    password: PASSWORD,
    fetch: fetchSpy,
    ...options,
  }).catch((e: unknown) => e);
  return { error, calls };
}

describe('the CalDAV target policy', () => {
  it('refuses private, loopback and link-local hosts before any request', async () => {
    for (const serverUrl of [
      'https://127.0.0.1:5232/',
      'https://localhost./dav/',
      'https://cal.localhost/',
      'https://[::1]/',
      'https://10.0.0.5/remote.php/dav',
      'https://192.168.1.20/',
      'https://169.254.169.254/latest/',
    ]) {
      const { error, calls } = await refusal({ serverUrl });
      expect({ serverUrl, error }).toEqual({ serverUrl, error: expect.any(CalDavTargetError) });
      expect((error as Error).message).toMatch(/private, loopback and link-local/);
      expect(calls).toEqual([]);
    }
  });

  it('allows them when allowPrivateTargets is set (tests, the demo)', async () => {
    const { error, calls } = await refusal({
      serverUrl: 'http://127.0.0.1:5232/',
      allowPrivateTargets: true,
    });
    expect(error).not.toBeInstanceOf(CalDavTargetError);
    expect(calls[0]).toBe('http://127.0.0.1:5232/');
  });

  it('refuses plain http to a public host: the password would travel in clear', async () => {
    const { error, calls } = await refusal({ serverUrl: 'http://caldav.example.com/' });
    expect(error).toBeInstanceOf(CalDavTargetError);
    expect((error as Error).message).toMatch(/https/);
    expect(calls).toEqual([]);
  });

  it('refuses what is not an http(s) URL, or one carrying a user name or password', async () => {
    for (const serverUrl of [
      'caldav.example.com',
      'ftp://caldav.example.com/',
      'https://alice:pw@cal.example.com/',
    ]) {
      const { error, calls } = await refusal({ serverUrl });
      expect({ serverUrl, error }).toEqual({ serverUrl, error: expect.any(CalDavTargetError) });
      expect((error as Error).message).not.toContain('pw@');
      expect(calls).toEqual([]);
    }
  });

  it('refuses a user name with a colon (Basic authentication cannot carry it)', async () => {
    const { error, calls } = await refusal({ username: 'alice:admin' });
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/colon/);
    expect(calls).toEqual([]);
  });

  it('refuses a name that resolves to a private address, when it connects (after DNS)', async () => {
    // This machine's own name resolves to a loopback or private address (/etc/hosts, a container's network).
    const name = hostname();
    const { address } = await lookup(name);
    expect({ name, address, range: ipaddr.process(address).range() }).not.toMatchObject({ range: 'unicast' });
    const error = await openCalDavAccount({
      serverUrl: `https://${name}:9/`,
      username: 'alice',
      password: PASSWORD,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CalDavTargetError);
    expect((error as Error).message).toContain(name);
  });
});

describe('a server that accepts the connection and never answers', () => {
  let silent: net.Server;
  let port: number;
  const sockets = new Set<net.Socket>();

  beforeAll(async () => {
    silent = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    port = (silent.address() as net.AddressInfo).port;
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it('is a timeout after timeoutMs, saying which request and how long', async () => {
    const error = await openCalDavAccount({
      serverUrl: `http://127.0.0.1:${port}/`,
      username: 'alice',
      password: PASSWORD,
      allowPrivateTargets: true,
      timeoutMs: 300,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CalDavTimeoutError);
    expect((error as CalDavTimeoutError).retryable).toBe(true);
    expect((error as Error).message).toMatch(
      /PROPFIND http:\/\/127\.0\.0\.1:\d+\/\S* gave no answer within 300 ms/,
    );
  });

  it("the caller's own abort is passed on as it is, not as a timeout", async () => {
    const controller = new AbortController();
    const opening = openCalDavAccount({
      serverUrl: `http://127.0.0.1:${port}/`,
      username: 'alice',
      password: PASSWORD,
      allowPrivateTargets: true,
      timeoutMs: 60_000,
      signal: controller.signal,
    });
    controller.abort(new Error('shutting down'));
    await expect(opening).rejects.toThrow('shutting down');
  });
});

describe('where the password may go (credentialScope, the Public Suffix List by tldts)', () => {
  const scope = credentialScope(new URL('https://caldav.icloud.com/'));
  it('the typed origin, and other https hosts of its registrable domain (iCloud sends users to pNN-caldav.icloud.com)', () => {
    expect(scope(new URL('https://caldav.icloud.com/123/calendars/'))).toBe(true);
    expect(scope(new URL('https://p42-caldav.icloud.com/123/calendars/'))).toBe(true);
  });
  it('never another site, plain http, or a domain that only shares a public suffix', () => {
    expect(scope(new URL('https://caldav.icloud.example.net/'))).toBe(false);
    expect(scope(new URL('http://p42-caldav.icloud.com/'))).toBe(false);
    const uk = credentialScope(new URL('https://dav.example.co.uk/'));
    expect(uk(new URL('https://dav.another.co.uk/'))).toBe(false);
    expect(uk(new URL('https://cal.example.co.uk/'))).toBe(true);
  });
  it('an IP literal or a name without a registrable domain vouches for nothing but itself', () => {
    const ip = credentialScope(new URL('http://127.0.0.1:5232/'));
    expect(ip(new URL('http://127.0.0.1:5232/alice/'))).toBe(true);
    expect(ip(new URL('http://127.0.0.1:5233/'))).toBe(false);
    expect(ip(new URL('http://localhost:5232/'))).toBe(false);
    const local = credentialScope(new URL('https://localhost/'));
    expect(local(new URL('https://other.localhost/'))).toBe(false);
  });
});

describe('a redirect is followed with the password only within the server’s site', () => {
  function redirectingFetch(location: string) {
    const seen: { url: string; authorized: boolean }[] = [];
    const fetchSpy: typeof fetch = async (input, init) => {
      const url = String(input);
      seen.push({ url, authorized: new Headers(init?.headers).has('authorization') });
      if (url.startsWith('https://caldav.example.com/'))
        return new Response(null, { status: 301, headers: { location } });
      return new Response('<?xml version="1.0"?><multistatus xmlns="DAV:"/>', {
        status: 207,
        headers: { 'content-type': 'application/xml' },
      });
    };
    return { seen, fetchSpy };
  }

  it('to another site: refused before a request is sent there', async () => {
    const { seen, fetchSpy } = redirectingFetch('https://attacker.example.net/dav/');
    const error = await openCalDavAccount({
      serverUrl: 'https://caldav.example.com/',
      username: 'ada',
      password: PASSWORD,
      fetch: fetchSpy,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CalDavTargetError);
    expect((error as Error).message).toMatch(/attacker\.example\.net is not the site of the server/);
    expect((error as Error).message).not.toContain(PASSWORD);
    expect(seen.filter((request) => !request.url.startsWith('https://caldav.example.com/'))).toEqual([]);
  });

  it('to another host of the same site: followed, with the password', async () => {
    const { seen, fetchSpy } = redirectingFetch('https://p07-caldav.example.com/dav/');
    await openCalDavAccount({
      serverUrl: 'https://caldav.example.com/',
      username: 'ada',
      password: PASSWORD,
      fetch: fetchSpy,
    }).catch(() => undefined);
    expect(seen).toContainEqual({ url: 'https://p07-caldav.example.com/dav/', authorized: true });
  });
});
