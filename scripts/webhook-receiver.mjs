#!/usr/bin/env node
// A webhook receiver to try slotfeed's webhooks with, on this machine: it verifies each delivery's signature
// with the `standardwebhooks` package (the Standard Webhooks reference implementation, not slotfeed's own
// code), prints one line per delivery, answers 204 to a good one and 401 to one whose signature fails.
//
//   node scripts/webhook-receiver.mjs --port <port> --secret "whsec_…" [--until-closed <start>]
//   node scripts/webhook-receiver.mjs --free-port
//
// With --until-closed it exits (0) once the booking of the slot starting at <start> (an ISO time, as the
// simulator's /__sim/slots lists it) is all in: a verified availability.changed that closes it, and the
// booking.inferred that covers it, in either order (a sync sends both): the README's first hour waits on it, and
// no delivery of that booking is left retrying against a receiver that has gone.
// --await-port <port> waits until something listens on that port of 127.0.0.1, then exits 0 (1 after 60 s): a
// script starts the receiver in the background, then waits with it before making what it should receive.
// --port 0 listens on any free port and prints which; --free-port prints a port that is free now and exits,
// for a script that must name the receiver's URL (to `slotfeed webhooks create`) before the receiver can start.
// Plain JavaScript, so it runs with `node` alone, without the build.
import http from 'node:http';
import net from 'node:net';
import { parseArgs } from 'node:util';
import { Webhook } from 'standardwebhooks';

const USAGE = `usage: node scripts/webhook-receiver.mjs --port <port> --secret <signing secret> [--until-closed <start>]
       node scripts/webhook-receiver.mjs --free-port | --await-port <port>

  --port <port>          the port to listen on; 0 takes any free port (the line it prints says which)
  --host <host>          the address to listen on (default 127.0.0.1)
  --secret <secret>      the signing secret \`slotfeed webhooks create\` printed (whsec_…)
  --until-closed <start> exit 0 once the booking of the slot starting then (ISO time) is in: its verified
                         availability.changed and booking.inferred
  --free-port            print a port free on 127.0.0.1 now, and exit
  --await-port <port>    wait until something listens on that port of 127.0.0.1, then exit
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
      'await-port': { type: 'string' },
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
} else if (values['await-port'] !== undefined) {
  awaitPort(values['await-port']);
} else {
  startReceiver();
}

/** Tries to connect every 50 ms until the port answers; a receiver starts in well under a second. */
function awaitPort(text) {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port < 1 || port > 65_535) usage(`--await-port ${text} is not a port number`);
  const deadline = Date.now() + 60_000;
  const attempt = () => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      process.exit(0);
    });
    socket.once('error', () => {
      if (Date.now() > deadline) {
        process.stderr.write(`webhook-receiver: nothing listens on 127.0.0.1:${port} after 60 s\n`);
        process.exit(1);
      }
      setTimeout(attempt, 50);
    });
  };
  attempt();
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

  function infersBookingAt(payload, startMs) {
    if (payload.type !== 'booking.inferred') return false;
    const { start, end } = payload.data?.booking ?? {};
    return Date.parse(start) <= startMs && startMs < Date.parse(end);
  }

  /** What of the booking at --until-closed has arrived. */
  const seen = { closed: false, inferred: false };

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
      if (untilClosed === undefined) return;
      if (closes(payload, untilClosed)) {
        seen.closed = true;
        process.stdout.write(`the slot at ${values['until-closed']} closed\n`);
      }
      if (infersBookingAt(payload, untilClosed)) {
        seen.inferred = true;
        process.stdout.write(`the booking at ${values['until-closed']} was inferred\n`);
      }
      if (seen.closed && seen.inferred) {
        process.stdout.write('all of the booking is in; stopping\n');
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
