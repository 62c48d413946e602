// Every route that carries a secret in its path (a feed's token, a share link's secret), taken from the web
// app's own route table rather than a list kept here: each is requested with its real secret and with an
// unknown one, by every method it answers, and no log line (captured at debug, which holds every access line)
// carries either secret in any of its encodings, while each request's access line is there, masked. A route
// added later with a secret in its path is requested here without anyone remembering to add it; one with a
// parameter name this file has not classified fails until someone says whether it is a secret.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { newFeedToken } from '../../src/feeds/feed-token.js';
import { buildWebApp } from '../../src/web/app.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { findLeaks } from './support/secret-forms.js';

/** Path parameters whose value is a bearer secret: whoever has the path has what it opens. */
const SECRET_PARAMS = new Set(['token', 'secret']);
/** Path parameters that open nothing by themselves (ids behind a credential, an asset's name). */
const PLAIN_PARAMS = new Set([
  ...['id', 'connectionId', 'teamId', 'feedId', 'shareLinkId', 'name'],
  // Bull Board's, under /admin/queues.
  ...['queueName', 'jobId', 'queueStatus', 'schedulerId'],
]);

interface Route {
  path: string;
  methods: string[];
}

/** fastify's printRoutes tree, flattened: a child's line holds only what it adds to its parent's path. */
function routesOfTree(tree: string): Route[] {
  const segments: string[] = [];
  const routes: Route[] = [];
  for (const line of tree.split('\n')) {
    const match = /^((?:[│ ] {3})*)(?:├── |└── )(.*?)(?: \(([^)]*)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    segments.length = depth;
    segments.push(match[2]!);
    const methods = (match[3] ?? '').split(', ').filter((m) => m !== '' && m !== '-');
    if (methods.length > 0) routes.push({ path: segments.join(''), methods });
  }
  return routes;
}

const paramsOf = (path: string) => [...path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]!);

const logLines: string[] = [];
let h: WebHarness;
let routes: Route[];
let feedToken: string;
let shareSecret: string;

beforeAll(async () => {
  h = await createWebHarness('sec_secret_paths', { simulator: { users: 1 }, logLines, logLevel: 'debug' });
  const connected = await h.connectViaWeb(h.sync.sim.users[0]!.email);
  await h.syncNow(connected.connectionId);
  feedToken = connected.token!;
  const feedId = (await h.feeds.findByToken(feedToken))!.id;
  shareSecret = (
    await h.deps.shareLinks.create({
      feedId,
      label: 'for the log test',
      expiresAt: null,
      now: h.sync.clock.now(),
    })
  ).secret;
  // The same app as the harness serves, built again to read its route table.
  const app = await buildWebApp(h.deps);
  routes = routesOfTree(app.printRoutes({ commonPrefix: false }));
  await app.close();
});
afterAll(async () => {
  await h?.close();
});

describe('routes with a secret in their path', () => {
  it('are found in the route table, and every path parameter is known to be a secret or not', () => {
    const secretRoutes = routes.filter((r) => paramsOf(r.path).some((p) => SECRET_PARAMS.has(p)));
    // The routes known today are among them (the table was read, not an empty list).
    expect(secretRoutes.map((r) => r.path)).toEqual(
      expect.arrayContaining([
        '/feeds/:token.ics',
        '/freebusy/:token.ifb',
        '/share/:secret',
        '/share/:secret.txt',
        '/share/:secret.ics',
        '/share/:secret/embed',
      ]),
    );
    const unclassified = routes.flatMap((r) =>
      paramsOf(r.path)
        .filter((p) => !SECRET_PARAMS.has(p) && !PLAIN_PARAMS.has(p))
        .map((p) => `${r.path} (:${p})`),
    );
    expect(unclassified).toEqual([]);
  });

  it('log every request with the secret masked, known or unknown, whatever the answer', async () => {
    const unknown = newFeedToken();
    const secretFor = { token: () => feedToken, secret: () => shareSecret } as Record<string, () => string>;
    const before = logLines.length;
    let requests = 0;
    const statuses: string[] = [];
    for (const route of routes) {
      const params = paramsOf(route.path);
      if (!params.some((p) => SECRET_PARAMS.has(p))) continue;
      for (const method of route.methods.filter((m) => m === 'GET' || m === 'HEAD')) {
        for (const which of ['known', 'encoded', 'unknown'] as const) {
          const path = route.path.replace(/:([A-Za-z]+)/g, (_all, name: string) => {
            const known = secretFor[name];
            if (known === undefined) throw new Error(`no value for :${name} in ${route.path}`);
            if (which === 'unknown') return unknown;
            // The router decodes a percent-encoded path: the same secret, written otherwise.
            const secret = known();
            return which === 'known' ? secret : `%${secret.charCodeAt(0).toString(16)}${secret.slice(1)}`;
          });
          const response = await h.request(method, path);
          statuses.push(`${which} ${method} ${route.path}: ${response.status}`);
          requests += 1;
        }
      }
    }
    // Each real secret opened its page or feed: the requests reached their handlers.
    for (const status of statuses.filter((s) => !s.startsWith('unknown'))) expect(status).toMatch(/: 200$/);
    const accessLines = logLines
      .slice(before)
      .map((line) => JSON.parse(line) as { msg?: string; url?: string })
      .filter((line) => line.msg === 'request' && /\/(feeds|freebusy|share)\//.test(line.url ?? ''));
    expect(accessLines).toHaveLength(requests);
    for (const line of accessLines) expect(line.url).toContain('[redacted]');
    const lines = new Map(logLines.map((line, i) => [`log line ${i + 1}`, line]));
    expect(
      findLeaks(lines, [
        { name: 'feed token', value: feedToken },
        { name: 'share secret', value: shareSecret },
        { name: 'unknown secret', value: unknown },
      ]),
    ).toEqual([]);
  });
});
