// The anchor of the CalDAV push bench (issue 35): what one server accepts from a client that does nothing but
// send the requests. node:http with keep-alive, the same conditional PUTs as a push of a change (each event made
// under If-None-Match: *, then rewritten under If-Match with the ETag the creation answered), at a fixed
// concurrency. Its rewrite rate is what slotfeed's push rate is held against.
//
// The same requests, not only the same methods: given `objects` (the event resources slotfeed wrote into one of its
// calendars, as the server gives them back: its own serialisation of what it stored), each calendar gets as many
// events of those texts (their UIDs made new), and one of them is rewritten, as a push of one change rewrites one of a feed's events. A server's cost for
// a PUT grows with what it parses and with the calendar it goes into: Radicale spent 8–9 ms of CPU on a push's
// PUT and 6.2–6.9 ms on a minimal event's in a calendar of its own, so a minimal anchor held slotfeed to a
// different, lighter workload. Without `objects`, one minimal event per calendar, as before.
//
// Given `perSecond`, the client is also held to a host's request rate as slotfeed's pushes are
// (CALDAV_HOST_RATE_PER_SECOND, a GCRA with a burst of its concurrency: lib/redis-rate-limiter.ts), so that a
// server faster than that rate is compared at the limits slotfeed keeps to, not past them.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';

export interface BareClientResult {
  creates: number;
  createsPerSecond: number;
  rewrites: number;
  rewritesPerSecond: number;
}

interface Answer {
  status: number;
  etag: string | undefined;
}

function put(agent: http.Agent, url: URL, body: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'PUT',
        agent,
        headers: { 'content-type': 'text/calendar; charset=utf-8', ...headers },
      },
      (response) => {
        response.resume();
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, etag: response.headers.etag ?? undefined }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

function eventText(uid: string, summary: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');
  const start = new Date(Date.now() + 3 * 3_600_000).toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');
  return [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//slotfeed bench//bare client//EN',
    'BEGIN:VEVENT',
    `UID:${uid}`,
    `DTSTAMP:${stamp}`,
    `DTSTART:${start}`,
    'DURATION:PT1H',
    `SUMMARY:${summary}`,
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');
}

/**
 * `text` with its UID (and every mention of it) made `uid` and its DTSTAMP made now: another event of the same
 * shape. `rewrite`: its SEQUENCE one higher too, so that a rewrite always differs from what it replaces (a
 * DTSTAMP alone may not, within a second), as a push's does.
 */
function asEvent(text: string, uid: string, rewrite = false): string {
  // Folded as it was written: a UID short enough for one line, as slotfeed's are, is replaced where it stands.
  const old = /^UID:(.*)\r?$/m.exec(text)?.[1];
  if (!old) throw new Error('bare client: an event resource without a one-line UID');
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');
  const made = text
    .split(old)
    .join(uid)
    .replace(/^DTSTAMP:.*?(\r?)$/m, `DTSTAMP:${stamp}$1`);
  if (!rewrite) return made;
  if (!/^SEQUENCE:\d+\r?$/m.test(made)) throw new Error('bare client: an event resource without a SEQUENCE');
  return made.replace(/^SEQUENCE:(\d+)/m, (_, sequence: string) => `SEQUENCE:${Number(sequence) + 1}`);
}

/** The body of `url` (GET), for reading back what was written there. */
export function readObject(url: URL, username: string, password: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { headers: { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          response.statusCode === 200
            ? resolve(Buffer.concat(chunks).toString('utf8'))
            : reject(new Error(`bare client: GET ${url.href} answered ${response.statusCode}`)),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end();
  });
}

/**
 * A wait before each request keeping them to `perSecond` with at most `burst` at once (GCRA, as the host's rate
 * limit); 0: no wait.
 */
function pacer(perSecond: number, burst: number): () => Promise<void> {
  if (perSecond <= 0) return async () => undefined;
  const intervalMs = 1000 / perSecond;
  const toleranceMs = intervalMs * Math.max(0, burst - 1);
  let theoreticalArrival = 0;
  return async () => {
    const now = performance.now();
    const base = Math.max(theoreticalArrival, now);
    theoreticalArrival = base + intervalMs;
    const waitMs = base - toleranceMs - now;
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
  };
}

/**
 * Events made then one rewritten in each calendar, `concurrency` requests at once; each phase timed alone. With
 * `objects`, a calendar holds one event of each text and the last is rewritten; without, one minimal event.
 */
export async function runBareCalDavClient(options: {
  calendarUrls: string[];
  objects?: readonly string[];
  username: string;
  password: string;
  concurrency: number;
  /** The rewrites' rate limit, as a host's (0 or absent: none). */
  perSecond?: number;
  /** Called as the rewrites (the measured phase) begin and end: a bench reads the server's CPU and load there. */
  onRewritesStart?: () => void;
  onRewritesEnd?: () => void;
}): Promise<BareClientResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const authorization = `Basic ${Buffer.from(`${options.username}:${options.password}`).toString('base64')}`;
  const limit = pLimit(options.concurrency);
  const texts = options.objects ?? [];
  const made = (uid: string, index: number) =>
    texts.length === 0 ? eventText(uid, 'Free') : asEvent(texts[index]!, uid);
  const rewritten = (uid: string, index: number) =>
    texts.length === 0 ? eventText(uid, 'Free (shorter)') : asEvent(texts[index]!, uid, true);
  const perCalendar = Math.max(1, texts.length);
  const events = options.calendarUrls.flatMap((calendar) =>
    Array.from({ length: perCalendar }, (_, index) => {
      const uid = randomUUID();
      return { uid, index, url: new URL(`${uid}.ics`, calendar), etag: '' };
    }),
  );
  // One event a calendar rewritten: its last.
  const rewrites = events.filter((event) => event.index === perCalendar - 1);
  try {
    const createStarted = performance.now();
    await Promise.all(
      events.map((event) =>
        limit(async () => {
          const answer = await put(agent, event.url, made(event.uid, event.index), {
            authorization,
            'if-none-match': '*',
          });
          if (answer.status !== 201 && answer.status !== 204)
            throw new Error(`bare client: PUT (create) ${event.url.href} answered ${answer.status}`);
          if (!answer.etag) throw new Error(`bare client: PUT (create) ${event.url.href} sent no ETag`);
          event.etag = answer.etag;
        }),
      ),
    );
    const createSeconds = (performance.now() - createStarted) / 1000;
    options.onRewritesStart?.();
    const paced = pacer(options.perSecond ?? 0, options.concurrency);
    const rewriteStarted = performance.now();
    await Promise.all(
      rewrites.map((event) =>
        limit(async () => {
          await paced();
          const answer = await put(agent, event.url, rewritten(event.uid, event.index), {
            authorization,
            'if-match': event.etag,
          });
          if (answer.status !== 201 && answer.status !== 204)
            throw new Error(`bare client: PUT (If-Match) ${event.url.href} answered ${answer.status}`);
        }),
      ),
    );
    const rewriteSeconds = (performance.now() - rewriteStarted) / 1000;
    options.onRewritesEnd?.();
    return {
      creates: events.length,
      createsPerSecond: events.length / createSeconds,
      rewrites: rewrites.length,
      rewritesPerSecond: rewrites.length / rewriteSeconds,
    };
  } finally {
    agent.destroy();
  }
}
