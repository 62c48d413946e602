// fast-check arbitraries for hostile HTTP requests against slotfeed's routes: the real route shapes with
// random or near-real parameters, random paths, every method, random query values (invalid percent-encoding
// and raw invalid UTF-8 included), random and oversized headers, and bodies of the wrong type or size.
import fc from 'fast-check';
import type { RawRequestSpec } from './raw-http.js';

export interface Knowns {
  feedTokens: string[];
  connectionIds: string[];
  feedIds: string[];
  adminToken: string;
  origin: string;
}

const latin1 = (text: string) => Buffer.from(text, 'latin1');
const utf8 = (text: string) => Buffer.from(text, 'utf8');

/** Bytes that are not valid UTF-8: lone continuation bytes, overlongs, surrogates, truncated sequences. */
const invalidUtf8 = fc.constantFrom(
  Buffer.from([0xff]),
  Buffer.from([0xc3, 0x28]),
  Buffer.from([0xe2, 0x82]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0x80, 0x80, 0x80]),
  Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
);
const percentJunk = fc.constantFrom(
  '%',
  '%Z',
  '%ZZ',
  '%C3%28',
  '%FF',
  '%ED%A0%80',
  '%00',
  '%2F',
  '%252F',
  '%u0041',
);
/** Printable ASCII and Latin-1 bytes: what the HTTP parser lets through to the application. */
const printableBytes = fc
  .array(
    fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f),
    { maxLength: 40 },
  )
  .map((codes) => Buffer.from(codes));
const text = fc.string({ maxLength: 40, unit: 'binary' });
/** Control characters: the parser must refuse them cleanly (a 400 from Node, never a hang). */
const controlBytes = fc.constantFrom(
  Buffer.from('a\x00b'),
  Buffer.from('\x01\x1b[31m'),
  Buffer.from('x\ry'),
  Buffer.from('x\ny: z'),
);

const asciiPiece = fc
  .array(
    fc.integer({ min: 0x21, max: 0x7e }).filter((c) => !'#?%/&='.includes(String.fromCharCode(c))),
    { maxLength: 30 },
  )
  .map((codes) => Buffer.from(codes));
const percentEncodedBytes = fc
  .uint8Array({ minLength: 1, maxLength: 24 })
  .map((bytes) => latin1([...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')));

/**
 * A path segment or query value. Raw bytes outside ASCII are refused by Node's parser before any route runs,
 * so here invalid UTF-8 travels percent-encoded (reaching fastify's decoder and the routes); pathArbitrary
 * sends it raw in a few requests of its own.
 */
const fuzzyPiece: fc.Arbitrary<Buffer> = fc.oneof(
  { arbitrary: text.map((t) => utf8(encodeURIComponent(t))), weight: 4 },
  { arbitrary: asciiPiece, weight: 4 },
  { arbitrary: percentJunk.map(latin1), weight: 2 },
  { arbitrary: percentEncodedBytes, weight: 3 },
  {
    arbitrary: fc.tuple(asciiPiece, percentJunk).map(([t, junk]) => Buffer.concat([t, latin1(junk)])),
    weight: 1,
  },
  { arbitrary: fc.integer({ min: 100, max: 3000 }).map((n) => latin1('A'.repeat(n))), weight: 1 },
);

function pick(values: string[], fallback: string): fc.Arbitrary<Buffer> {
  return values.length > 0 ? fc.constantFrom(...values).map(latin1) : fc.constant(latin1(fallback));
}

function pathArbitrary(k: Knowns): fc.Arbitrary<Buffer> {
  const token = fc.oneof(
    pick(k.feedTokens, 'x'),
    fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => latin1(Buffer.from(b).toString('base64url'))),
    fuzzyPiece,
  );
  const id = fc.oneof(pick(k.connectionIds, 'x'), pick(k.feedIds, 'x'), fc.uuid().map(latin1), fuzzyPiece);
  const p = (...parts: (Buffer | string)[]) =>
    Buffer.concat(parts.map((x) => (typeof x === 'string' ? latin1(x) : x)));
  return fc.oneof(
    token.map((t) => p('/feeds/', t, '.ics')),
    token.map((t) => p('/feeds/', t, '/preview.json')),
    fc.tuple(fuzzyPiece, fuzzyPiece).map(([a, b]) => p('/feeds/', a, '/', b)),
    fc
      .constantFrom(
        '/robots.txt',
        '/connect',
        '/oauth/callback',
        '/',
        '/admin/login',
        '/admin/logout',
        '/healthz',
        '/readyz',
        '/metrics',
        '/admin/queues',
        '/admin/queues/',
        '/admin/queues/api/queues',
        '//admin/queues',
        '/admin/../admin/queues',
        '/%61dmin/queues',
        '/ADMIN',
        '/feeds/',
        '/feeds',
        '*',
      )
      .map(latin1),
    fc
      .tuple(id, fc.constantFrom('sync', 'disable', 'enable', 'feeds', 'x'))
      .map(([i, a]) => p('/admin/connections/', i, '/', a)),
    fc.tuple(id, fc.constantFrom('rotate', 'revoke', 'x')).map(([i, a]) => p('/admin/feeds/', i, '/', a)),
    fc
      .tuple(
        fc.constantFrom('sync', 'tick', 'nope'),
        fuzzyPiece,
        fc.constantFrom('', '/retry', '/promote', '/logs', '/clean/completed', '/pause', '/resume', '/empty'),
      )
      .map(([q, j, a]) => p('/admin/queues/api/queues/', q, '/', j, a)),
    fuzzyPiece.map((s) => p('/admin/queues/static/', s)),
    fc
      .tuple(fc.constantFrom('/feeds/', '/admin/connections/', '/oauth/callback?state=', '/'), invalidUtf8)
      .map(([prefix, raw]) => p(prefix, raw)),
    fc
      .array(fuzzyPiece, { minLength: 1, maxLength: 4 })
      .map((parts) => p('/', Buffer.concat(parts.flatMap((x) => [x, latin1('/')])))),
  );
}

const QUERY_KEYS = [
  'code',
  'state',
  'error',
  'error_description',
  'login_hint',
  'next',
  'notice',
  'token',
  'days',
  'x',
];

function queryArbitrary(): fc.Arbitrary<Buffer> {
  const pair = fc.tuple(fc.oneof(fc.constantFrom(...QUERY_KEYS).map(latin1), fuzzyPiece), fuzzyPiece);
  return fc
    .option(fc.array(pair, { maxLength: 6 }), { nil: undefined })
    .map((pairs) =>
      pairs === undefined
        ? Buffer.alloc(0)
        : Buffer.concat([
            latin1('?'),
            ...pairs.flatMap(([key, value], i) => [latin1(i > 0 ? '&' : ''), key, latin1('='), value]),
          ]),
    );
}

function headersArbitrary(k: Knowns): fc.Arbitrary<[string, Buffer][]> {
  const headerValue = fc.oneof(
    { arbitrary: printableBytes, weight: 6 },
    { arbitrary: fc.string({ maxLength: 60, unit: 'grapheme' }).map(utf8), weight: 2 },
    { arbitrary: invalidUtf8, weight: 2 },
    { arbitrary: controlBytes, weight: 1 },
  );
  const choices: fc.Arbitrary<[string, Buffer]>[] = [
    fc
      .constantFrom('text/html', 'application/json', '*/*', 'text/calendar', '')
      .map((v): [string, Buffer] => ['accept', latin1(v)]),
    fc
      .oneof(
        fc
          .constantFrom(
            'application/x-www-form-urlencoded',
            'application/json',
            'application/xml',
            'multipart/form-data; boundary=x',
            'text/plain',
            'application/x-www-form-urlencoded; charset=latin1',
            'application/octet-stream',
          )
          .map(latin1),
        headerValue,
      )
      .map((v): [string, Buffer] => ['content-type', v]),
    fc
      .oneof(
        fc.constant(latin1(`Bearer ${k.adminToken}`)),
        fc.constant(latin1(`bearer  ${k.adminToken}  `)),
        fc.constant(latin1(`Bearer ${k.adminToken}x`)),
        text.map((t) => latin1(`Bearer ${t}`)),
        text.map((t) => latin1(`Basic ${Buffer.from(t).toString('base64')}`)),
        headerValue,
      )
      .map((v): [string, Buffer] => ['authorization', v]),
    fc
      .oneof(
        fc.constant(latin1('slotfeed_admin=v1.99999999999999.forged')),
        fc.constant(latin1('slotfeed_admin=v1.99999999999999')),
        headerValue.map((v) => Buffer.concat([latin1('slotfeed_admin='), v])),
        headerValue,
      )
      .map((v): [string, Buffer] => ['cookie', v]),
    headerValue.map((v): [string, Buffer] => ['if-none-match', v]),
    fc
      .oneof(fc.constant(latin1('"x", W/"y", *')), fc.constant(latin1('*')))
      .map((v): [string, Buffer] => ['if-none-match', v]),
    headerValue.map((v): [string, Buffer] => ['if-modified-since', v]),
    fc
      .oneof(
        fc.constantFrom('gzip', 'gzip;q=0', 'br, gzip;q=abc', '*', 'identity;q=0, *;q=0').map(latin1),
        headerValue,
      )
      .map((v): [string, Buffer] => ['accept-encoding', v]),
    fc.oneof(fc.constant(latin1(k.origin)), headerValue).map((v): [string, Buffer] => ['origin', v]),
    fc.oneof(fc.constant(latin1(`${k.origin}/`)), headerValue).map((v): [string, Buffer] => ['referer', v]),
    headerValue.map((v): [string, Buffer] => ['x-forwarded-for', v]),
    headerValue.map((v): [string, Buffer] => ['range', v]),
    fc
      .tuple(fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), headerValue)
      .map(([name, v]): [string, Buffer] => [`x-${name}`, v]),
  ];
  // Past Node's 16 KiB header limit, and near it: rarer, since the parser answers them before any route.
  const huge = fc
    .integer({ min: 8_000, max: 80_000 })
    .map((n): [string, Buffer] => ['x-huge', latin1('h'.repeat(n))]);
  return fc.array(
    fc.oneof(...choices.map((arbitrary) => ({ arbitrary, weight: 4 })), { arbitrary: huge, weight: 1 }),
    { maxLength: 6 },
  );
}

function bodyArbitrary(): fc.Arbitrary<Buffer | undefined> {
  return fc.option(
    fc.oneof(
      fc
        .array(
          fc.tuple(
            fc.constantFrom('token', 'next', 'days', 'merge', 'label', 'upstreamEventId', 'x'),
            fuzzyPiece,
          ),
          { maxLength: 5 },
        )
        .map((pairs) =>
          Buffer.concat(pairs.flatMap(([key, value], i) => [latin1(`${i > 0 ? '&' : ''}${key}=`), value])),
        ),
      fc.json().map(utf8),
      text.map(latin1),
      invalidUtf8,
      // Past the 64 KiB body limit.
      fc.integer({ min: 60_000, max: 200_000 }).map((n) => latin1('b'.repeat(n))),
    ),
    { nil: undefined },
  );
}

export function hostileRequest(k: Knowns): fc.Arbitrary<RawRequestSpec> {
  return fc
    .record({
      method: fc.constantFrom(
        'GET',
        'GET',
        'GET',
        'HEAD',
        'POST',
        'POST',
        'PUT',
        'DELETE',
        'PATCH',
        'OPTIONS',
        'TRACE',
        'PROPFIND',
      ),
      path: pathArbitrary(k),
      query: queryArbitrary(),
      headers: headersArbitrary(k),
      body: bodyArbitrary(),
    })
    .map(({ method, path, query, headers, body }) => ({
      method,
      target: Buffer.concat([path, query]),
      headers,
      ...(body === undefined ? {} : { body }),
    }));
}

/** For a failure message: the request as printable text, long runs cut. */
export function describeRequest(spec: RawRequestSpec): string {
  const show = (b: Buffer) => JSON.stringify(b.toString('latin1').slice(0, 300));
  return `${spec.method} ${show(spec.target)} headers=${spec.headers.map(([n, v]) => `${n}:${show(v)}`).join(' ')} body=${spec.body ? spec.body.length : 'none'}`;
}
