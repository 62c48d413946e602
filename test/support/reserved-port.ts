// A loopback port for a server a test starts later (a web role whose address the simulator must know first, a
// Redis or Postgres of the test's own). A port found by binding port 0 is an ephemeral one, and between the test
// releasing it and its server binding it, any outgoing connection on the machine (a Postgres client, a jest
// worker's HTTP request) may be given it as its local port: a ci-check on a busy machine failed with EADDRINUSE
// that way. Ports are drawn below the kernel's ephemeral range, which no outgoing connection is given, and
// checked free by binding them; two tests drawing the same one at once is a chance of one in thousands.
import { readFileSync } from 'node:fs';
import net from 'node:net';

/** Where the draw starts: above the well-known services a test machine runs (Postgres, Redis, RabbitMQ…). */
const LOWEST = 10_000;

/** The first port of the kernel's ephemeral range (Linux's default when it cannot be read). */
function ephemeralStart(): number {
  try {
    const [first] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    const port = Number(first);
    return port > LOWEST + 1_000 ? port : 32_768;
  } catch {
    return 32_768;
  }
}

const bindsFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => server.close(() => resolve(true)));
  });

/** A free loopback port below the ephemeral range. */
export async function reservePort(): Promise<number> {
  const below = ephemeralStart();
  for (let tries = 0; tries < 100; tries++) {
    const port = LOWEST + Math.floor(Math.random() * (below - LOWEST));
    if (await bindsFree(port)) return port;
  }
  throw new Error(`no free loopback port between ${LOWEST} and ${below}`);
}
