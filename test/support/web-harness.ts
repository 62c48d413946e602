// The web role on a real socket, wired to everything a sync test has (fresh database, Redis prefix, simulator),
// with the simulator's registered redirect URI equal to the app's real /oauth/callback URL. Its WebDeps come
// from the composition root's own composeWebDeps, so whatever production gives the web role, tests give too.
import http from 'node:http';
import { Writable } from 'node:stream';
import { loadConfig } from '../../src/config.js';
import type { Metrics } from '../../src/lib/metrics.js';
import { Releasers } from '../../src/lib/releasers.js';
import { createLogger } from '../../src/log.js';
import { composeWebDeps } from '../../src/composition/web-deps.js';
import { openFeedChanges, openPostgresProbe } from '../../src/composition/clients.js';
import type { FeedStore } from '../../src/store/feeds.js';
import { syncConnection } from '../../src/sync/sync-connection.js';
import { startWeb, type WebDeps } from '../../src/web/app.js';
import { createSyncHarness, type HarnessOptions, type SyncHarness } from './sync-harness.js';
import { reservePort } from './reserved-port.js';

export const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';

export interface WebHarnessOptions extends Omit<HarnessOptions, 'redirectUri'> {
  /** WEB_* / FEED_* / ADMIN_TOKEN over the defaults (ADMIN_TOKEN defaults to ADMIN_TOKEN above). */
  webEnv?: Record<string, string>;
  /** Collect the web role's log lines (JSON) here, at logLevel (default info, as in production). */
  logLines?: string[];
  logLevel?: 'info' | 'debug';
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

export interface WebHarness {
  sync: SyncHarness;
  url: string;
  deps: WebDeps;
  metrics: Metrics;
  feeds: FeedStore;
  /** Connection ids the app asked to sync, in order. */
  enqueued: string[];
  /** A request over a plain socket: no automatic Accept-Encoding, no decompression, no redirects followed. */
  request(
    method: string,
    pathOrUrl: string,
    options?: { headers?: Record<string, string>; body?: string },
  ): Promise<RawResponse>;
  get(pathOrUrl: string, headers?: Record<string, string>): Promise<RawResponse>;
  /** GET /connect (with login_hint when given): the authorization URL the app redirected to. */
  startConnect(email?: string): Promise<string>;
  /** GET the simulator's /login with a login_hint: the callback URL it redirects to (code and state). */
  approve(authorizationUrl: string): Promise<string>;
  /**
   * The whole flow with login_hint: the callback's 303, the owner's page it leads to (with the owner's session
   * cookie) and the first feed token that page shows.
   */
  connectViaWeb(email: string): Promise<{
    page: RawResponse;
    token: string | null;
    connectionId: string;
    ownerCookie: string;
    callback: RawResponse;
  }>;
  /** One sync of one connection, as a worker would run it. */
  syncNow(connectionId: string): Promise<void>;
  close(): Promise<void>;
}

export function rawRequest(
  method: string,
  url: string,
  options: { headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers: options.headers ?? {} }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body,
          text: body.toString('utf8'),
        });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    if (options.body !== undefined) request.write(options.body);
    request.end();
  });
}

export const FEED_TOKEN_IN_PAGE = /\/feeds\/([A-Za-z0-9_-]{43})\.ics/;

export async function createWebHarness(label: string, options: WebHarnessOptions = {}): Promise<WebHarness> {
  const port = await reservePort();
  const origin = `http://127.0.0.1:${port}`;
  const sync = await createSyncHarness(label, { ...options, redirectUri: `${origin}/oauth/callback` });
  const web = loadConfig(
    {
      WEB_HOST: '127.0.0.1',
      WEB_PORT: String(port),
      PUBLIC_BASE_URL: origin,
      ADMIN_TOKEN,
      ...options.webEnv,
    },
    ['web'],
  ).web;
  const lines = options.logLines;
  const logger = createLogger({
    base: { service: 'slotfeed', role: 'web' },
    level: lines ? (options.logLevel ?? 'info') : sync.config.log.level,
    ...(lines
      ? {
          destination: new Writable({
            write(chunk: Buffer, _encoding, done) {
              lines.push(chunk.toString('utf8'));
              done();
            },
          }),
        }
      : {}),
  });
  // The web role's parts of its own, released before the sync harness's clients they use.
  const releasers = new Releasers();
  const postgresProbe = openPostgresProbe(sync.clients, releasers);
  const feedChanges = await openFeedChanges(sync.clients, releasers, logger);
  const composed = composeWebDeps(
    { ...sync.config, web },
    sync.clients,
    sync.stores,
    sync.services,
    { postgresProbe, feedChanges, roleReadiness: {}, logger },
    sync.clock,
  );
  const enqueued: string[] = [];
  const deps: WebDeps = {
    ...composed,
    async enqueueSync(ids) {
      enqueued.push(...ids);
      await composed.enqueueSync(ids);
    },
  };
  // The registry the sync services count into, so a test sees sync and web metrics together.
  const { metrics, feeds } = deps;
  const server = await startWeb(deps);
  releasers.add('web', () => server.close());
  const absolute = (pathOrUrl: string) =>
    pathOrUrl.startsWith('http') ? pathOrUrl : `${server.url}${pathOrUrl}`;

  const harness: WebHarness = {
    sync,
    url: server.url,
    deps,
    metrics,
    feeds,
    enqueued,
    // A test's request follows its changes by microseconds, a real client's by far more: wait until the web
    // role has heard of every change committed so far, as it would have by the time a real request arrived.
    async request(method, pathOrUrl, requestOptions) {
      await feedChanges.caughtUp();
      return rawRequest(method, absolute(pathOrUrl), requestOptions);
    },
    get: (pathOrUrl, headers) => harness.request('GET', pathOrUrl, headers ? { headers } : {}),
    async startConnect(email) {
      const response = await harness.get(
        email === undefined ? '/connect' : `/connect?login_hint=${encodeURIComponent(email)}`,
      );
      if (response.status !== 302 || !response.headers.location)
        throw new Error(`/connect answered ${response.status}`);
      return response.headers.location;
    },
    async approve(authorizationUrl) {
      const response = await rawRequest('GET', authorizationUrl);
      if (response.status !== 302 || !response.headers.location) {
        throw new Error(`simulator login answered ${response.status}: ${response.text.slice(0, 200)}`);
      }
      return response.headers.location;
    },
    async connectViaWeb(email) {
      const callback = await harness.approve(await harness.startConnect(email));
      const landed = await harness.get(callback, { accept: 'text/html' });
      if (landed.status !== 303 || !String(landed.headers.location).startsWith('/me')) {
        throw new Error(`callback answered ${landed.status}: ${landed.text.slice(0, 300)}`);
      }
      const ownerCookie = String(landed.headers['set-cookie']?.[0] ?? '').split(';')[0]!;
      const page = await harness.get(String(landed.headers.location), {
        accept: 'text/html',
        cookie: ownerCookie,
      });
      if (page.status !== 200) throw new Error(`/me answered ${page.status}: ${page.text.slice(0, 300)}`);
      const token = FEED_TOKEN_IN_PAGE.exec(page.text)?.[1] ?? null;
      const connection = await sync.db.prisma.connection.findFirstOrThrow({ where: { email } });
      return { page, token, connectionId: connection.id, ownerCookie, callback: landed };
    },
    async syncNow(connectionId) {
      await syncConnection(sync.services.syncDeps, { connectionId, jobId: null, attempt: 1, maxAttempts: 1 });
    },
    async close() {
      try {
        await releasers.releaseAll();
      } finally {
        await sync.close();
      }
    },
  };
  return harness;
}
