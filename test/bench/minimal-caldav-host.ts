// A minimal CalDAV endpoint of the bench's own (issue 35), standing in for a distant provider: on a loopback port
// of its own (so a host of its own to slotfeed's per-host limits), it answers after `delayMs` the requests a push
// makes: PROPFIND on a calendar (any path ending in /) or an event, REPORT calendar-query (every event of the
// calendar with its ETag and data; the client keeps those with its feed's marker), PUT under If-None-Match: * or
// If-Match, and DELETE under If-Match, each precondition checked. It counts the requests it has under way, and the
// most at once: what slotfeed's host limit must bound, counted on the server's side. `behaviour` may be changed
// while it runs (a slow host, a host answering 429 with Retry-After).
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { InServiceMeter, type InServiceFigures } from './requests-in-service.js';

export interface HostBehaviour {
  delayMs: number;
  /** Set: every request is answered 429 with this Retry-After (seconds), after the delay. */
  retryAfterSeconds?: number;
}

export interface MinimalCalDavHost {
  origin: string;
  behaviour: HostBehaviour;
  inFlight(): number;
  /** The most requests under way at once since the last reset. */
  mostAtOnce(): number;
  requests(): number;
  /** Its busy fraction and requests in service since the last reset. */
  inService(): InServiceFigures;
  resetCounts(): void;
  close(): Promise<void>;
}

const xmlEscape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const MULTISTATUS_OPEN =
  '<?xml version="1.0" encoding="utf-8"?>\n<d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">';

function calendarResponse(href: string): string {
  return (
    `<d:response><d:href>${xmlEscape(href)}</d:href><d:propstat><d:prop>` +
    '<d:resourcetype><d:collection/><c:calendar/></d:resourcetype><d:displayname>bench</d:displayname>' +
    '<c:supported-calendar-component-set><c:comp name="VEVENT"/></c:supported-calendar-component-set>' +
    '</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>'
  );
}

function eventResponse(href: string, etag: string, data?: string): string {
  return (
    `<d:response><d:href>${xmlEscape(href)}</d:href><d:propstat><d:prop>` +
    `<d:getetag>${xmlEscape(etag)}</d:getetag>` +
    (data === undefined ? '' : `<c:calendar-data>${xmlEscape(data)}</c:calendar-data>`) +
    '</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>'
  );
}

const etagOf = (data: string) => `"${createHash('sha1').update(data).digest('hex').slice(0, 16)}"`;

export async function startMinimalCalDavHost(behaviour: HostBehaviour): Promise<MinimalCalDavHost> {
  // path of the event → its data and ETag
  const events = new Map<string, { data: string; etag: string }>();
  const meter = new InServiceMeter();
  const host: MinimalCalDavHost = {
    origin: '',
    behaviour,
    inFlight: () => meter.inService(),
    mostAtOnce: () => meter.read().most,
    requests: () => meter.read().requests,
    inService: () => meter.read(),
    resetCounts: () => meter.reset(),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  const answer = (request: http.IncomingMessage, body: string): [number, Record<string, string>, string] => {
    const path = new URL(request.url ?? '/', 'http://host').pathname;
    const method = request.method ?? 'GET';
    const stored = events.get(path);
    const ifMatch = request.headers['if-match'];
    const ifNoneMatch = request.headers['if-none-match'];
    const xml = { 'content-type': 'application/xml; charset=utf-8' };
    if (method === 'PROPFIND') {
      if (path.endsWith('/'))
        return [207, xml, `${MULTISTATUS_OPEN}${calendarResponse(path)}</d:multistatus>`];
      if (!stored) return [404, {}, ''];
      return [207, xml, `${MULTISTATUS_OPEN}${eventResponse(path, stored.etag)}</d:multistatus>`];
    }
    if (method === 'REPORT') {
      const listed = [...events]
        .filter(([eventPath]) => eventPath.startsWith(path) && !eventPath.slice(path.length).includes('/'))
        .map(([eventPath, event]) => eventResponse(eventPath, event.etag, event.data));
      return [207, xml, `${MULTISTATUS_OPEN}${listed.join('')}</d:multistatus>`];
    }
    if (method === 'PUT') {
      if (ifNoneMatch === '*' && stored) return [412, {}, ''];
      if (ifMatch !== undefined && (!stored || stored.etag !== ifMatch)) return [412, {}, ''];
      const etag = etagOf(body);
      events.set(path, { data: body, etag });
      return [stored ? 204 : 201, { etag }, ''];
    }
    if (method === 'DELETE') {
      if (!stored) return [404, {}, ''];
      if (ifMatch !== undefined && stored.etag !== ifMatch) return [412, {}, ''];
      events.delete(path);
      return [204, {}, ''];
    }
    return [405, {}, ''];
  };

  const server = http.createServer((request, response) => {
    meter.enter();
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      meter.leave();
    };
    response.on('close', end);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const { delayMs, retryAfterSeconds } = host.behaviour;
      setTimeout(() => {
        if (retryAfterSeconds !== undefined) {
          response.writeHead(429, { 'retry-after': String(retryAfterSeconds) }).end();
          return;
        }
        const [status, headers, body] = answer(request, Buffer.concat(chunks).toString('utf8'));
        response.writeHead(status, headers).end(body);
      }, delayMs);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  host.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return host;
}
