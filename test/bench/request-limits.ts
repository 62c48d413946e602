// What a request's time limit costs after its request (request-deadline.ts): requests through slotfeed's two
// doors, the CalDAV one (guardedFetch over its node:http transport) and the upstream one (exchangeJson over
// fetch), to a local server in this process, then the process's CPU while it sits idle past their limits. A limit
// that is not let go with its request fires then, for every request made. Rounds alternate the two doors.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardedFetch } from '../../src/caldav/guarded-fetch.js';
import { nodeHttpTransport } from '../../src/caldav/http-transport.js';
import { exchangeJson } from '../../src/upstream/http-exchange.js';
import type { BenchSection } from './bench-result.js';
import { check } from './bench-result.js';

const LIMIT_MS = 2_000;
/** Idle past the last limit by this much: the limits' timers have all come due, whatever the load. */
const IDLE_PAST_LIMIT_MS = 1_000;

const microsEach = (usage: NodeJS.CpuUsage, requests: number) =>
  Math.round(((usage.user + usage.system) / requests) * 10) / 10;

export async function benchRequestLimits(options: {
  requests: number;
  rounds: number;
}): Promise<BenchSection[]> {
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.setHeader('content-type', 'application/json');
      response.end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
  // A caller's signal, as the workers pass their shutdown's.
  const shutdown = new AbortController().signal;
  const caldav = guardedFetch({
    transport: nodeHttpTransport({ allowPrivateTargets: true, maxBodyBytes: 1_000_000 }),
    policy: { allowPrivateTargets: true },
    authorization: 'Basic eDp5',
    mayCarryCredentials: () => true,
    timeoutMs: LIMIT_MS,
    signal: shutdown,
    now: () => new Date(),
  });
  const upstream = {
    fetch,
    timeoutMs: LIMIT_MS,
    now: () => new Date(),
    maxBodyBytes: 1_000_000,
    signal: shutdown,
  };
  const doors = {
    caldav: async () => {
      const answer = await caldav(url, { method: 'PUT', body: 'x' });
      check(answer.status === 200, `the CalDAV door answered ${answer.status}`);
      await answer.text();
    },
    upstream: async () => {
      const { status } = await exchangeJson(upstream, {
        endpoint: 'x',
        url: new URL(url),
        method: 'GET',
        headers: {},
        secrets: [],
      });
      check(status === 200, `the upstream door answered ${status}`);
    },
  };
  const figures: Record<string, number[]> = {};
  try {
    for (let round = 0; round < options.rounds; round++) {
      for (const [door, send] of Object.entries(doors)) {
        const sending = process.cpuUsage();
        for (let i = 0; i < options.requests; i++) await send();
        const sent = process.cpuUsage(sending);
        const idling = process.cpuUsage();
        await new Promise((resolve) => setTimeout(resolve, LIMIT_MS + IDLE_PAST_LIMIT_MS));
        const idle = process.cpuUsage(idling);
        (figures[`${door}RequestMicros`] ??= []).push(microsEach(sent, options.requests));
        (figures[`${door}IdleAfterMicrosPerRequest`] ??= []).push(microsEach(idle, options.requests));
      }
    }
  } finally {
    server.close();
  }
  return [
    {
      benchmark: "a request's time limit after its request",
      inputs: {
        requestsPerRound: options.requests,
        rounds: options.rounds,
        limitMs: LIMIT_MS,
        server: 'node:http in the same process, loopback, a 12-byte JSON answer',
      },
      figures: Object.fromEntries(Object.entries(figures).map(([name, values]) => [name, values.join(', ')])),
    },
  ];
}
