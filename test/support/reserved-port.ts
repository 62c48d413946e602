// A loopback port for a server a test starts later (a web role whose address the simulator must know first, a
// Redis or Postgres of the test's own). A port found by binding port 0 is an ephemeral one, and between the test
// releasing it and its server binding it, any outgoing connection on the machine (a Postgres client, a jest
// worker's HTTP request) may be given it as its local port: a ci-check on a busy machine failed with EADDRINUSE
// that way. Ports are drawn low enough that neither they nor the port a Redis Cluster node also listens on (its
// port + 10,000, the cluster bus) are ever in the kernel's ephemeral range, and checked free by binding them.
// Ports a browser refuses to load a page from are never drawn: Chromium answered ERR_UNSAFE_PORT for a web role
// that had drawn 10080.
import { readFileSync } from 'node:fs';
import net from 'node:net';

/** Where the draw starts: above the well-known services a test machine runs (Postgres, Redis, RabbitMQ…). */
const LOWEST = 10_000;
/** A Redis Cluster node's bus port is its port plus this. */
export const CLUSTER_BUS_OFFSET = 10_000;
/**
 * The Fetch standard's bad ports at or above LOWEST (its "port blocking"): browsers refuse
 * to load from them, so a page test's server must not listen there.
 */
export const BROWSER_BLOCKED_PORTS: ReadonlySet<number> = new Set([10080]);
/** Linux's default first ephemeral port, taken when the kernel's cannot be read. */
const LINUX_EPHEMERAL_START = 32_768;

/** The first port of the kernel's ephemeral range. */
function ephemeralStart(): number {
  try {
    const [first] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    return Number(first) || LINUX_EPHEMERAL_START;
  } catch {
    return LINUX_EPHEMERAL_START;
  }
}

const bindsFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => server.close(() => resolve(true)));
  });

/**
 * A free loopback port that, plus CLUSTER_BUS_OFFSET, is still below the ephemeral range, and that a browser loads
 * pages from. `random` draws it (a test's own, to make a draw land where it must).
 */
export async function reservePort(random: () => number = Math.random): Promise<number> {
  const below = ephemeralStart() - CLUSTER_BUS_OFFSET;
  if (below - LOWEST < 1_000)
    throw new Error(
      `the ephemeral ports start at ${below + CLUSTER_BUS_OFFSET}: too low to draw test ports under`,
    );
  for (let tries = 0; tries < 100; tries++) {
    const port = LOWEST + Math.floor(random() * (below - LOWEST));
    if (!BROWSER_BLOCKED_PORTS.has(port) && (await bindsFree(port))) return port;
  }
  throw new Error(`no free loopback port between ${LOWEST} and ${below}`);
}
