#!/usr/bin/env node
// A webhook receiver to try slotfeed's webhooks with, on this machine: it verifies each delivery's signature
// with the `standardwebhooks` package (the Standard Webhooks reference implementation, not slotfeed's own
// code), prints one line per delivery, answers 204 to a good one and 401 to one whose signature fails.
//
//   node scripts/webhook-receiver.mjs --port <port> --secret "whsec_…" [--until-closed <start>]
//   node scripts/webhook-receiver.mjs --free-port
//
// With --until-closed it exits (0) once a verified availability.changed says the slot starting at <start>
// (an ISO time, as the simulator's /__sim/slots lists it) closed: the README's first hour waits on it.
// --port 0 listens on any free port and prints which; --free-port prints a port that is free now and exits,
// for a script that must name the receiver's URL (to `slotfeed webhooks create`) before the receiver can start.
// Plain JavaScript, so it runs with `node` alone, without the build.
import http from 'node:http';
import net from 'node:net';
import { parseArgs } from 'node:util';
import { Webhook } from 'standardwebhooks';

const USAGE = `usage: node scripts/webhook-receiver.mjs --port <port> --secret <signing secret> [--until-closed <start>]
       node scripts/webhook-receiver.mjs --free-port

  --port <port>          the port to listen on; 0 takes any free port (the line it prints says which)
  --host <host>          the address to listen on (default 127.0.0.1)
  --secret <secret>      the signing secret \`slotfeed webhooks create\` printed (whsec_…)
  --until-closed <start> exit 0 once a verified availability.changed closes the slot starting then (ISO time)
  --free-port            print a port free on 127.0.0.1 now, and exit
  --help                 this text
`;

let values;
try {
  ({ values } = parseArgs({
    options: {
      port: { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      secret: { type: 'string' },
      'until-closed': { type: 'string' },
      'free-port': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  }));
} catch (thrown) {
  // parseArgs's own errors (an unknown option, a missing value) carry a stack nobody asked for.
  usage(thrown instanceof Error ? thrown.message : String(thrown));
}

function usage(message) {
  process.stderr.write(`webhook-receiver: ${message}\n${USAGE}`);
  process.exit(2);
}

if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (values['free-port']) {
  const probe = net.createServer();
  probe.listen(0, '127.0.0.1', () => {
    const { port } = probe.address();
    probe.close(() => process.stdout.write(`${port}\n`));
  });
} else {
  startReceiver();
}

function startReceiver() {
  if (values.port === undefined) usage('--port is required (0 for any free port)');
  if (!values.secret) usage('--secret is required: the signing secret `slotfeed webhooks create` printed');
  const port = Number(values.port);
  if (!/^\d+$/.test(values.port) || port > 65_535) usage(`--port ${values.port} is not a port number`);
  let verifier;
  try {
    verifier = new Webhook(values.secret);
  } catch (thrown) {
    usage(`--secret is not a signing secret (${thrown instanceof Error ? thrown.message : thrown})`);
  }
  const untilClosed = values['until-closed'] === undefined ? undefined : Date.parse(values['until-closed']);
  if (Number.isNaN(untilClosed)) usage(`--until-closed ${values['until-closed']} is not a time`);

  const slots = (list) => (list ?? []).map((slot) => slot.start).join(' ');

  /** One line saying what the delivery was about. */
  function describe(payload) {
    if (payload.type !== 'availability.changed') return payload.type;
    const parts = (payload.data?.eventTypes ?? []).map(
      (e) => `${e.eventTypeId}: closed [${slots(e.closed)}] opened [${slots(e.opened)}]`,
    );
    return `availability.changed #${payload.sequence} ${parts.join('; ')}`;
  }

  function closes(payload, startMs) {
    if (payload.type !== 'availability.changed') return false;
    return (payload.data?.eventTypes ?? []).some((e) =>
      (e.closed ?? []).some((slot) => Date.parse(slot.start) === startMs),
    );
  }

  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let payload;
      try {
        payload = verifier.verify(body, request.headers);
      } catch (thrown) {
        process.stdout.write(`rejected: ${thrown instanceof Error ? thrown.message : thrown}\n`);
        response.writeHead(401).end();
        return;
      }
      process.stdout.write(`verified ${request.headers['webhook-id']}: ${describe(payload)}\n`);
      response.writeHead(204).end();
      if (untilClosed !== undefined && closes(payload, untilClosed)) {
        process.stdout.write(`the slot at ${values['until-closed']} closed; stopping\n`);
        server.close();
        server.closeAllConnections();
      }
    });
  });

  server.on('error', (error) => {
    process.stderr.write(`webhook-receiver: ${error.message}\n`);
    process.exit(1);
  });
  server.listen(port, values.host, () => {
    process.stdout.write(`webhook receiver listening on http://${values.host}:${server.address().port}/\n`);
  });
  process.on('SIGINT', () => server.close(() => process.exit(0)));
}
