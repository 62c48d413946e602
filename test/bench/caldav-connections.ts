// Benchmark (issue 43, 2): what a CalDAV request costs over https with and without a kept connection. Real
// servers are https, and a push of one change is one request: before, every request opened its own TCP
// connection and TLS handshake (request-filtering-agent's shared agents keep none alive), on slotfeed's side and
// the server's. One node:https server in a process of its own (a self-signed certificate made by openssl, which
// the client trusts as its authority, so certificate checks are in the measure) answers 204 to PUTs of an event's
// size; the production transport (nodeHttpTransport, the private-address filter on with this loopback address
// allowed) sends BENCH_CALDAV_CONNECTION_REQUESTS (500) of them one after another, first with agents as before
// (no keep-alive), then with lib/keep-alive-agents.ts's, twice over. CPU per request is this process's (user and
// system) and the server's (/proc), so both hold on a busy machine; the wall time per request is reported beside.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { nodeHttpTransport } from '../../src/caldav/http-transport.js';
import { createKeepAliveAgents, type KeepAliveAgents } from '../../src/lib/keep-alive-agents.js';
import { check, type BenchSection } from './bench-result.js';
import { cpuMsOf, loadAverage, round } from './process-stats.js';

const REQUESTS = Number(process.env.BENCH_CALDAV_CONNECTION_REQUESTS ?? 500);
const WARM_UP = 20;
/** An event of a free-time feed is some 600 bytes of iCalendar. */
const EVENT = `BEGIN:VCALENDAR\r\n${'X-PAD:free time\r\n'.repeat(34)}END:VCALENDAR\r\n`;

const SERVER = `
const https = require('node:https');
const fs = require('node:fs');
const [key, cert] = process.argv.slice(1).map((file) => fs.readFileSync(file));
const server = https.createServer({ key, cert }, (request, response) => {
  request.resume();
  request.on('end', () => { response.writeHead(204, { etag: '"1"' }); response.end(); });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

interface Measured {
  clientCpuMs: number;
  serverCpuMs: number;
  wallMs: number;
}

export async function benchCaldavConnections(): Promise<BenchSection[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'slotfeed-bench-tls-'));
  const [key, cert] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert,
  ], { stdio: 'ignore' }); // prettier-ignore
  const server = spawn(process.execPath, ['-e', SERVER, key, cert], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const [portLine] = (await once(server.stdout!, 'data')) as [Buffer];
    const url = `https://127.0.0.1:${String(portLine).trim()}/calendars/bench/event.ics`;
    const trust = { allowIPAddressList: ['127.0.0.1'], ca: readFileSync(cert) };
    // As before: one shared agent of request-filtering-agent's, without keep-alive (what useAgent gave).
    const unkept = new RequestFilteringHttpsAgent(trust);
    const before: KeepAliveAgents = { agentFor: () => unkept };
    const pooled = createKeepAliveAgents({ allowPrivateTargets: false, filter: trust });
    const run = async (agents: KeepAliveAgents): Promise<Measured> => {
      const send = nodeHttpTransport({ allowPrivateTargets: false, maxBodyBytes: 1 << 20, agents });
      const put = async () => {
        const answer = await send(url, { method: 'PUT', body: EVENT, headers: { 'if-match': '"1"' } });
        check(answer.status === 204, `the server answered ${answer.status}`);
      };
      for (let i = 0; i < WARM_UP; i++) await put();
      const [client, serverCpu, wall] = [process.cpuUsage(), cpuMsOf(server.pid!), performance.now()];
      for (let i = 0; i < REQUESTS; i++) await put();
      const used = process.cpuUsage(client);
      return {
        clientCpuMs: (used.user + used.system) / 1000 / REQUESTS,
        serverCpuMs: (cpuMsOf(server.pid!) - serverCpu) / REQUESTS,
        wallMs: (performance.now() - wall) / REQUESTS,
      };
    };
    const loadBefore = loadAverage();
    const runs = { before: [] as Measured[], kept: [] as Measured[] };
    for (let round = 0; round < 2; round++) {
      runs.before.push(await run(before));
      runs.kept.push(await run(pooled));
    }
    const mean = (all: Measured[], key: keyof Measured) =>
      all.reduce((sum, m) => sum + m[key], 0) / all.length;
    const figures = {
      clientCpuMsPerRequestBefore: round(mean(runs.before, 'clientCpuMs'), 2),
      clientCpuMsPerRequestKept: round(mean(runs.kept, 'clientCpuMs'), 2),
      serverCpuMsPerRequestBefore: round(mean(runs.before, 'serverCpuMs'), 2),
      serverCpuMsPerRequestKept: round(mean(runs.kept, 'serverCpuMs'), 2),
      wallMsPerRequestBefore: round(mean(runs.before, 'wallMs'), 2),
      wallMsPerRequestKept: round(mean(runs.kept, 'wallMs'), 2),
      loadBefore,
      loadAfter: loadAverage(),
    };
    console.log(
      `caldav-connections: CPU per https request ${figures.clientCpuMsPerRequestBefore} → ` +
        `${figures.clientCpuMsPerRequestKept} ms (server ${figures.serverCpuMsPerRequestBefore} → ` +
        `${figures.serverCpuMsPerRequestKept} ms), wall ${figures.wallMsPerRequestBefore} → ` +
        `${figures.wallMsPerRequestKept} ms; load ${figures.loadBefore} → ${figures.loadAfter}`,
    );
    return [
      {
        benchmark: 'CalDAV requests over https, a new connection each vs kept connections',
        inputs: { requests: REQUESTS, rounds: 2, bodyBytes: EVENT.length },
        figures,
      },
    ];
  } finally {
    server.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}
