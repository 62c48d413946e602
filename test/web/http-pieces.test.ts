// The pure pieces of the web layer: conditional-GET evaluation, HTTP-date parsing, Accept-Encoding, feed links
// and HTML escaping. No I/O.
import { describe, expect, it } from '@jest/globals';
import { acceptsGzip } from '../../src/web/accept-encoding.js';
import { formatHttpDate, parseHttpDate } from '../../src/lib/http-date.js';
import { isNotModified, parseEntityTagList } from '../../src/web/conditional-get.js';
import { feedLinksFor, isLoopbackBaseUrl } from '../../src/web/feed-links.js';
import { escapeHtml, html } from '../../src/web/html.js';

const lastModified = new Date('2026-03-02T09:01:30.750Z');
const validators = { opaqueTags: ['abc', 'abc-gzip'], lastModified };
const LM = 'Mon, 02 Mar 2026 09:01:30 GMT';

describe('parseHttpDate', () => {
  it('reads the three HTTP-date forms', () => {
    const expected = new Date('1994-11-06T08:49:37Z');
    expect(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT')).toEqual(expected);
    expect(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', new Date('2026-01-01T00:00:00Z'))).toEqual(
      expected,
    );
    expect(parseHttpDate('Sun Nov  6 08:49:37 1994')).toEqual(expected);
  });

  it('rejects what is not an HTTP-date, even when Date.parse would take it', () => {
    for (const value of [
      '',
      'yesterday',
      '2026-03-02T09:01:30Z',
      'Mon, 2 Mar 2026 09:01:30 GMT',
      'Mon, 02 Mar 2026 09:01:30 UTC',
      'Mon, 31 Feb 2026 09:01:30 GMT',
      'Mon, 02 Mar 2026 25:01:30 GMT',
      '1772442090',
    ]) {
      expect(parseHttpDate(value)).toBeUndefined();
    }
  });

  it('formats Last-Modified in whole seconds', () => {
    expect(formatHttpDate(lastModified)).toBe(LM);
  });
});

describe('parseEntityTagList', () => {
  it('reads strong, weak, lists and *', () => {
    expect(parseEntityTagList('"a"')).toEqual(['a']);
    expect(parseEntityTagList('W/"a", "b" ,W/"c"')).toEqual(['a', 'b', 'c']);
    expect(parseEntityTagList(' * ')).toEqual(['*']);
    expect(parseEntityTagList('"a",,"b"')).toEqual(['a', 'b']);
  });
  it('gives up on malformed values', () => {
    expect(parseEntityTagList('a')).toBeUndefined();
    expect(parseEntityTagList('"a" "b"')).toBeUndefined();
    expect(parseEntityTagList('"a')).toBeUndefined();
  });
});

describe('isNotModified', () => {
  it.each([
    ['If-None-Match matching', { ifNoneMatch: '"abc"' }, true],
    ['If-None-Match matching the gzip tag', { ifNoneMatch: '"abc-gzip"' }, true],
    ['If-None-Match weak form', { ifNoneMatch: 'W/"abc"' }, true],
    ['If-None-Match not matching', { ifNoneMatch: '"xyz"' }, false],
    ['If-None-Match *', { ifNoneMatch: '*' }, true],
    ['If-Modified-Since equal', { ifModifiedSince: LM }, true],
    ['If-Modified-Since later', { ifModifiedSince: 'Mon, 02 Mar 2026 10:00:00 GMT' }, true],
    ['If-Modified-Since one second earlier', { ifModifiedSince: 'Mon, 02 Mar 2026 09:01:29 GMT' }, false],
    ['If-Modified-Since malformed', { ifModifiedSince: '2026-03-02' }, false],
    ['both, If-None-Match not matching', { ifNoneMatch: '"xyz"', ifModifiedSince: LM }, false],
    [
      'both, If-None-Match matching',
      { ifNoneMatch: '"abc"', ifModifiedSince: 'Mon, 02 Mar 2026 08:00:00 GMT' },
      true,
    ],
    [
      'malformed If-None-Match still hides If-Modified-Since',
      { ifNoneMatch: 'abc', ifModifiedSince: LM },
      false,
    ],
    ['neither', {}, false],
  ])('%s', (_name, headers, expected) => {
    expect(isNotModified(headers, validators)).toBe(expected);
  });
});

describe('acceptsGzip', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['gzip', true],
    ['deflate, gzip;q=0.5', true],
    ['GZIP', true],
    ['x-gzip', true],
    ['gzip;q=0', false],
    ['gzip; q=0.000', false],
    ['*', true],
    ['*, gzip;q=0', false],
    ['br, deflate', false],
    ['identity', false],
  ])('%s → %s', (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });
});

describe('feedLinksFor', () => {
  it('builds the https, webcal, Google and Outlook.com links', () => {
    const links = feedLinksFor('https://slots.example.com/', 'TOKEN_-1', 'Zoë – free time');
    expect(links.https).toBe('https://slots.example.com/feeds/TOKEN_-1.ics');
    expect(links.webcal).toBe('webcal://slots.example.com/feeds/TOKEN_-1.ics');
    expect(links.google).toBe(
      'https://calendar.google.com/calendar/render?cid=webcal%3A%2F%2Fslots.example.com%2Ffeeds%2FTOKEN_-1.ics',
    );
    expect(links.outlook).toBe(
      'https://outlook.live.com/calendar/0/addfromweb?url=https%3A%2F%2Fslots.example.com%2Ffeeds%2FTOKEN_-1.ics' +
        '&name=Zo%C3%AB%20%E2%80%93%20free%20time',
    );
  });
});

describe('html', () => {
  it('escapes every interpolation except Raw fragments', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p title="${'"quoted"'}">${inner}${['<', html`<br />`]}${null}${false}</p>`.html).toBe(
      '<p title="&quot;quoted&quot;"><b>&lt;i&gt;</b>&lt;<br /></p>',
    );
  });
});

describe('isLoopbackBaseUrl', () => {
  it('is true for addresses of this machine only', () => {
    for (const url of [
      'http://127.0.0.1:3000',
      'http://localhost',
      'http://app.localhost:8080',
      'http://[::1]:3000',
      'http://127.1.2.3',
    ]) {
      expect([url, isLoopbackBaseUrl(url)]).toEqual([url, true]);
    }
    for (const url of ['https://slotfeed.example', 'http://10.0.0.5:3000', 'http://128.0.0.1', 'not a url']) {
      expect([url, isLoopbackBaseUrl(url)]).toEqual([url, false]);
    }
  });
});
