// The anchor of the CalDAV push bench (issue 35): what one server accepts from a client that does nothing but
// send the requests. node:http with keep-alive, the same conditional PUTs as a push of a change (each event made
// under If-None-Match: *, then rewritten under If-Match with the ETag the creation answered), at a fixed
// concurrency, one event per calendar. Its rewrite rate is what slotfeed's push rate is held against.
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

/** One event made then rewritten in each calendar, `concurrency` requests at once; each phase timed alone. */
export async function runBareCalDavClient(options: {
  calendarUrls: string[];
  username: string;
  password: string;
  concurrency: number;
  /** Called as the rewrites (the measured phase) begin and end: a bench reads the server's CPU and load there. */
  onRewritesStart?: () => void;
  onRewritesEnd?: () => void;
}): Promise<BareClientResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const authorization = `Basic ${Buffer.from(`${options.username}:${options.password}`).toString('base64')}`;
  const limit = pLimit(options.concurrency);
  const events = options.calendarUrls.map((calendar) => {
    const uid = randomUUID();
    return { uid, url: new URL(`${uid}.ics`, calendar), etag: '' };
  });
  try {
    const createStarted = performance.now();
    await Promise.all(
      events.map((event) =>
        limit(async () => {
          const answer = await put(agent, event.url, eventText(event.uid, 'Free'), {
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
    const rewriteStarted = performance.now();
    await Promise.all(
      events.map((event) =>
        limit(async () => {
          const answer = await put(agent, event.url, eventText(event.uid, 'Free (shorter)'), {
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
      rewrites: events.length,
      rewritesPerSecond: events.length / rewriteSeconds,
    };
  } finally {
    agent.destroy();
  }
}
