// Helpers shared by the chaos tests: a Redis server and a Postgres cluster of the test's own (so they can be
// killed or stopped and restarted without touching anyone else's), and the invariants every fault must leave
// intact, read from Postgres.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startEmbeddedPostgres, type RunningPostgres } from '../../src/demo/embedded-postgres-server.js';
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import type { CallArrival } from '../../src/simulator/index.js';
import { CLUSTER_BUS_OFFSET, reservePort } from '../support/reserved-port.js';
import { waitFor } from '../support/wait-for.js';

/** A free loopback port for a server the test starts on it (support/reserved-port.ts). */
export const freePort = reservePort;

export interface OwnRedis {
  url: string;
  port: number;
  /** Kills the server (SIGKILL by default): with no persistence, everything it held is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts a fresh, empty server on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
  });
}

/** redis-server on a spare loopback port, no snapshots, no AOF: a restart comes back empty. */
export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const start = async () => {
    const proc = spawn(
      'redis-server',
      ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'],
      { stdio: 'ignore' },
    );
    child = proc;
    exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    await waitFor(
      () => answersPing(port),
      (up) => up,
      { timeoutMs: 10_000, intervalMs: 50, what: `redis-server on port ${port}` },
    );
  };
  await start();
  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return { url: `redis://127.0.0.1:${port}`, port, kill, restart: start, stop: () => kill('SIGKILL') };
}

export interface OwnPostgres {
  /** Superuser URL of its `postgres` database (pass it as the harness's databaseAdminUrl). */
  adminUrl: string;
  port: number;
  isRunning(): boolean;
  /** Fast shutdown: every connection is terminated, and new ones are refused until restart. */
  stop(): Promise<void>;
  /** Starts the same cluster again on the same port, its data intact. */
  restart(): Promise<void>;
  /** Stops it if it runs, and deletes its data. */
  remove(): Promise<void>;
}

/** A Postgres cluster of the test's own (the demo's embedded server), in a temporary directory. */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'slotfeed-own-postgres-'));
  // Started by root, the server runs as the `postgres` user, which must be able to enter this directory.
  await chmod(workDir, 0o755);
  const dataDir = path.join(workDir, 'postgres');
  const password = randomBytes(12).toString('hex');
  let server: RunningPostgres | undefined = await startEmbeddedPostgres({ dataDir, password });
  const { adminUrl, port } = server;
  const stop = async () => {
    await server?.stop();
    server = undefined;
  };
  return {
    adminUrl,
    port,
    isRunning: () => server !== undefined,
    stop,
    async restart() {
      server ??= await startEmbeddedPostgres({ dataDir, password, port });
    },
    async remove() {
      await stop();
      await rm(workDir, { recursive: true, force: true });
    },
  };
}

/** Open slot rows that share a connection, event type and start: a slot stored twice. */
export async function duplicateOpenSlots(prisma: PrismaClient): Promise<number> {
  const rows = await prisma.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM (
      SELECT 1 FROM slot WHERE gone_at IS NULL
      GROUP BY connection_id, upstream_event_id, starts_at HAVING count(*) > 1
    ) d`;
  return Number(rows[0]?.n ?? 0);
}

/** Pairs of recorded sync runs of one connection whose [start, end] overlap: two syncs at once. */
export async function overlappingRuns(prisma: PrismaClient): Promise<{ connectionId: string }[]> {
  return prisma.$queryRaw<{ connectionId: string }[]>`
    SELECT a.connection_id::text AS "connectionId" FROM sync_run a JOIN sync_run b
      ON a.connection_id = b.connection_id AND a.id < b.id
     AND a.started_at < b.finished_at AND b.started_at < a.finished_at`;
}

/** The most calls that arrived within any `windowMs` (a sliding window over the arrival times). */
export function mostCallsInAnyWindow(arrivals: readonly CallArrival[], windowMs: number): number {
  const times = arrivals.map((a) => a.atMs).sort((a, b) => a - b);
  let most = 0;
  for (let start = 0, end = 0; end < times.length; end++) {
    while ((times[end] as number) - (times[start] as number) >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

export interface OwnRedisCluster {
  /** host:port of every node, comma-separated, as REDIS_CLUSTER_NODES takes them. */
  nodes: string;
  ports: number[];
  /** SIGKILLs one node: no persistence, so what it held lives on only in its replica, if it has one. */
  kill(port: number): Promise<void>;
  /** Starts a killed node again, empty but with its cluster config: it rejoins, as a replica if it was replaced. */
  restart(port: number): Promise<void>;
  /** Every node as one of the nodes still running sees it (CLUSTER NODES). */
  describe(): Promise<ClusterNode[]>;
  stop(): Promise<void>;
}

export interface ClusterNode {
  id: string;
  port: number;
  role: 'master' | 'replica';
  /** The id of its master, for a replica. */
  masterId: string | undefined;
  /** Down as the cluster sees it (fail, or fail? while it is being decided). */
  failing: boolean;
  /** Slot ranges served, for a master: [first, last] each. */
  slots: [number, number][];
}

const redisCli = async (port: number, ...args: string[]) =>
  (await promisify(execFile)('redis-cli', ['-p', String(port), ...args])).stdout;

function parseClusterNodes(text: string): ClusterNode[] {
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const [id, address, flags, master, , , , , ...slots] = line.split(' ');
      return {
        id: id!,
        port: Number(/:(\d+)@/.exec(address!)?.[1]),
        role: flags!.includes('master') ? 'master' : 'replica',
        masterId: master === '-' ? undefined : master,
        failing: /\bfail\??\b/.test(flags!),
        slots: slots
          .filter((range) => /^\d/.test(range))
          .map((range) => {
            const [first, last] = range.split('-').map(Number);
            return [first!, last ?? first!] as [number, number];
          }),
      };
    });
}

/**
 * A Redis Cluster of `size` masters, each with `replicas` replicas, on spare loopback ports, its files in a
 * temporary folder, created with `redis-cli --cluster create` and ready (cluster_state:ok on every node, every
 * replica in sync with its master) when this resolves. A node that misses its master for 2 s starts a failover.
 */
export async function startOwnRedisCluster(size = 3, { replicas = 0 } = {}): Promise<OwnRedisCluster> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'slotfeed-redis-cluster-'));
  const ports: number[] = [];
  // Each node listens on its port and its bus port (+ CLUSTER_BUS_OFFSET): no two of those may meet.
  const taken = new Set<number>();
  while (ports.length < size * (1 + replicas)) {
    const port = await freePort();
    if (taken.has(port) || taken.has(port + CLUSTER_BUS_OFFSET)) continue;
    ports.push(port);
    taken.add(port).add(port + CLUSTER_BUS_OFFSET);
  }
  const startNode = (port: number) =>
    spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--cluster-node-timeout',
        '2000',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
      ],
      { stdio: 'ignore' },
    );
  const children = ports.map(startNode);
  const exits = children.map((child) => new Promise<void>((resolve) => child.once('exit', () => resolve())));
  const stop = async () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.all(exits);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) {
      await waitFor(
        () => answersPing(port),
        (up) => up,
        { timeoutMs: 10_000, intervalMs: 50, what: `node ${port}` },
      );
    }
    await promisify(execFile)('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((port) => `127.0.0.1:${port}`),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ]);
    for (const port of ports) {
      await waitFor(
        async () => (await promisify(execFile)('redis-cli', ['-p', String(port), 'cluster', 'info'])).stdout,
        (info) => info.includes('cluster_state:ok'),
        { timeoutMs: 20_000, intervalMs: 100, what: `cluster state ok on ${port}` },
      );
    }
    for (const port of ports) {
      await waitFor(
        () => redisCli(port, 'info', 'replication'),
        (info) => info.includes('role:master') || info.includes('master_link_status:up'),
        { timeoutMs: 20_000, intervalMs: 100, what: `node ${port} in sync with its master` },
      );
    }
  } catch (thrown: unknown) {
    await stop();
    throw thrown;
  }
  const killed = new Set<number>();
  return {
    nodes: ports.map((port) => `127.0.0.1:${port}`).join(','),
    ports,
    async kill(port) {
      const child = children[ports.indexOf(port)]!;
      killed.add(port);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exits[ports.indexOf(port)];
    },
    async restart(port) {
      const i = ports.indexOf(port);
      const child = startNode(port);
      children[i] = child;
      exits[i] = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      await waitFor(
        () => answersPing(port),
        (up) => up,
        { timeoutMs: 10_000, intervalMs: 50, what: `node ${port} again` },
      );
      killed.delete(port);
    },
    async describe() {
      const alive = ports.find((port) => !killed.has(port))!;
      return parseClusterNodes(await redisCli(alive, 'cluster', 'nodes'));
    },
    stop,
  };
}
