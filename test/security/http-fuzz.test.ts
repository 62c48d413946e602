// Hostile requests over every route, on a real socket: random methods, paths (real route shapes with real,
// random and malformed parameters), query values, headers (oversized and non-UTF-8 ones included) and
// bodies (wrong types, invalid UTF-8, past the body limit), with and without admin credentials. Not one
// answer may be a 5xx, the server must keep answering, nothing may be logged as a failed request, and the
// heap must not grow with the number of requests. The seed is fixed; fast-check prints it (and the shrunk
// request) on failure; FUZZ_SEED / FUZZ_RUNS override for a longer local run.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ADMIN_TOKEN, createWebHarness, type WebHarness } from '../support/web-harness.js';
import { describeRequest, hostileRequest, type Knowns } from './support/hostile-requests.js';
import { sendRaw, type RawAnswer } from './support/raw-http.js';
import { patient } from '../support/patience.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20260302);
const RUNS = Number(process.env.FUZZ_RUNS ?? 1200);

let h: WebHarness;
let port: number;
let knowns: Knowns;
const logLines: string[] = [];
const statuses = new Map<number, number>();
/** Answers the application wrote (Node's own parser refusals carry no content type). */
let appAnswers = 0;

beforeAll(async () => {
  h = await createWebHarness('sec_fuzz', { logLines });
  port = Number(new URL(h.url).port);
  const feedTokens: string[] = [];
  const connectionIds: string[] = [];
  for (const user of h.sync.sim.users.slice(0, 2)) {
    const { token, connectionId } = await h.connectViaWeb(user.email);
    await h.syncNow(connectionId);
    feedTokens.push(token!);
    connectionIds.push(connectionId);
  }
  const feedIds = (await h.feeds.list()).map((feed) => feed.id);
  knowns = { feedTokens, connectionIds, feedIds, adminToken: ADMIN_TOKEN, origin: h.url };
});
afterAll(async () => {
  await h?.close();
});

/** A garbage collector to measure with: `--expose-gc` switched on at run time, gc taken from a fresh context. */
function collector(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}

function heapAfterGc(gc: (() => void) | undefined): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

async function fuzz(seed: number, numRuns: number): Promise<void> {
  await fc.assert(
    fc.asyncProperty(hostileRequest(knowns), async (spec) => {
      let answer: RawAnswer;
      try {
        answer = await sendRaw(port, spec);
      } catch (thrown: unknown) {
        throw new Error(`no answer: ${describeRequest(spec)}`, { cause: thrown });
      }
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      if (!answer.body.toString().includes(`"message":"Client Error"`) && answer.status !== 431) appAnswers++;
      if (answer.status < 100 || answer.status >= 500) {
        throw new Error(
          `answered ${answer.status} to ${describeRequest(spec)}\n${answer.head}\n${answer.body.toString('utf8', 0, 500)}`,
        );
      }
    }),
    { seed, numRuns, endOnFailure: false },
  );
}

const raw = (
  method: string,
  target: string | Buffer,
  headers: [string, string | Buffer][] = [],
  body?: string | Buffer,
) =>
  sendRaw(port, {
    method,
    target: typeof target === 'string' ? Buffer.from(target, 'latin1') : target,
    headers: headers.map(([name, value]) => [
      name,
      typeof value === 'string' ? Buffer.from(value, 'latin1') : value,
    ]),
    ...(body === undefined ? {} : { body: typeof body === 'string' ? Buffer.from(body, 'latin1') : body }),
  });

describe('the worst cases, one by one', () => {
  const form = ['content-type', 'application/x-www-form-urlencoded'] as [string, string];
  // Our own origin, so the login form's CSRF check lets the body through to be parsed.
  const origin = (): [string, string] => ['origin', h.url];
  it.each([
    [
      'a body past the 64 KiB limit on a route that reads it',
      () => raw('POST', '/admin/login', [form], 'token='.padEnd(70_000, 'x')),
      413,
    ],
    ['a 100 KiB header', () => raw('GET', '/healthz', [['x-huge', 'h'.repeat(100_000)]]), 431],
    // Node counts the request line against its 16 KiB header limit.
    ['a 20 KB request target', () => raw('GET', `/feeds/${'A'.repeat(20_000)}.ics`), 431],
    [
      'a form body of invalid UTF-8',
      () =>
        raw(
          'POST',
          '/admin/login',
          [form, origin()],
          Buffer.from([0x74, 0x6f, 0x6b, 0x65, 0x6e, 0x3d, 0xc3, 0x28, 0xff]),
        ),
      401,
    ],
    [
      'a form body with invalid percent escapes',
      () => raw('POST', '/admin/login', [form, origin()], 'token=%ZZ%C3%28&next=%'),
      401,
    ],
    [
      'JSON where a form is expected',
      () => raw('POST', '/admin/login', [['content-type', 'application/xml'], origin()], '<token/>'),
      415,
    ],
    [
      'JSON with a token of the wrong type',
      () => raw('POST', '/admin/login', [['content-type', 'application/json'], origin()], '{"token":[1]}'),
      401,
    ],
    [
      'a feed token of invalid UTF-8, percent-encoded',
      () => raw('GET', '/feeds/%C3%28%FF%ED%A0%80.ics'),
      // fastify refuses a path that does not decode (FST_ERR_BAD_URL) before routing.
      400,
    ],
    ['a feed token with an encoded slash and NUL', () => raw('GET', '/feeds/a%2F..%2F..%00b.ics'), 404],
    ['a callback state of invalid UTF-8', () => raw('GET', '/oauth/callback?state=%C3%28&code=%FF'), 400],
    ['a repeated callback state', () => raw('GET', '/oauth/callback?state=a&state=b&code=c&code=d'), 400],
    ['a login_hint of invalid UTF-8', () => raw('GET', '/connect?login_hint=%ED%A0%80'), 302],
    [
      'an admin id of invalid UTF-8',
      () => raw('POST', '/admin/connections/%C3%28/sync', [['authorization', `Bearer ${ADMIN_TOKEN}`]]),
      400,
    ],
    [
      'a Bull Board job id of invalid UTF-8',
      () =>
        raw('GET', '/admin/queues/api/queues/sync/%C3%28/logs', [['authorization', `Bearer ${ADMIN_TOKEN}`]]),
      400,
    ],
    [
      'an If-None-Match of raw bytes',
      () =>
        raw('GET', `/feeds/${knowns.feedTokens[0]}.ics`, [
          ['if-none-match', Buffer.from([0x22, 0xff, 0x22])],
        ]),
      200,
    ],
    [
      'an If-Modified-Since far out of range',
      () =>
        raw('GET', `/feeds/${knowns.feedTokens[0]}.ics`, [
          ['if-modified-since', 'Mon, 01 Jan 99999 00:00:00 GMT'],
        ]),
      200,
    ],
  ])('%s', async (_what, send, status) => {
    const answer = await send();
    expect(answer.status).toBe(status);
  });
});

describe('hostile requests', () => {
  it(
    'never get a 5xx, never stop the server, and do not make the heap grow with their number',
    async () => {
      const gc = collector();
      // Warm-up half: JIT, pools, fastify's caches and the render cache fill here, not in the measured half.
      await fuzz(SEED, RUNS / 2);
      const heapBefore = heapAfterGc(gc);
      const rssBefore = process.memoryUsage().rss;
      await fuzz(SEED + 1, RUNS / 2);
      const heapAfter = heapAfterGc(gc);
      const rssAfter = process.memoryUsage().rss;

      // Each half sends a few MiB of bodies and headers; a leak of even a small object per request over
      // hundreds of requests plus the retained bodies would show. Bounds are generous where no gc is available.
      const heapBound = (gc ? 24 : 96) * 1024 * 1024;
      expect(heapAfter - heapBefore).toBeLessThan(heapBound);
      expect(rssAfter - rssBefore).toBeLessThan(256 * 1024 * 1024);

      const health = await h.get('/healthz');
      expect(health.status).toBe(200);
      // The 5xx handler logs every failure; none may have happened even where a client saw something else.
      expect(logLines.filter((line) => line.includes('"request failed"'))).toEqual([]);
      expect(logLines.filter((line) => /"level":(50|60)/.test(line))).toEqual([]);
    },
    patient(120_000),
  );

  it('exercised the routes rather than bouncing off the parser', () => {
    const total = [...statuses.values()].reduce((a, b) => a + b, 0);
    expect(total).toBe(RUNS);
    // Successes (feeds, admin with the token, health), redirects (connect, admin actions), refusals.
    for (const status of [200, 302, 400, 401, 404]) expect(statuses.get(status) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(431) ?? 0).toBeGreaterThan(0);
    expect(appAnswers).toBeGreaterThan(total * 0.6);
  });
});
