// A TCP proxy in front of a real Postgres that counts the round trips its clients make (issue 43): a client's
// statements go out and it waits for the server's ReadyForQuery ('Z'), which ends each simple query and each
// extended-protocol Sync, so the Z messages sent back are the round trips, whatever the client library. The SQL
// of each (Parse and Query messages) is kept too, so a failing count can say which statements it saw.
import net from 'node:net';
import { closeTogether } from './socket-pair.js';
import type { Peer, SyncHarness } from './sync-harness.js';

export interface RoundTrip {
  /** The statements sent in it, as their SQL text; empty for a round trip of prepared statements alone. */
  statements: string[];
}

export interface PostgresRoundTrips {
  port: number;
  /** postgresql://… of `databaseUrl`'s database through the proxy. */
  urlFor(databaseUrl: string): string;
  /** Round trips since the last call (or the start), connections' start-ups left out. */
  take(): RoundTrip[];
  close(): Promise<void>;
}

/** Whole protocol messages of a stream, after a first untyped one (the client's start-up message). */
function messageReader(untypedFirst: boolean, onMessage: (type: string, body: Buffer) => void) {
  let pending = Buffer.alloc(0);
  let awaitingStartup = untypedFirst;
  return (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    for (;;) {
      if (awaitingStartup) {
        if (pending.length < 4) return;
        const length = pending.readInt32BE(0);
        if (pending.length < length) return;
        pending = pending.subarray(length);
        awaitingStartup = false;
        continue;
      }
      if (pending.length < 5) return;
      const length = pending.readInt32BE(1);
      if (pending.length < 1 + length) return;
      onMessage(String.fromCharCode(pending[0]!), pending.subarray(5, 1 + length));
      pending = pending.subarray(1 + length);
    }
  };
}

const cString = (body: Buffer, from: number) => {
  const end = body.indexOf(0, from);
  return { text: body.toString('utf8', from, end), next: end + 1 };
};

export async function startPostgresRoundTrips(target: {
  host: string;
  port: number;
}): Promise<PostgresRoundTrips> {
  const sockets = new Set<net.Socket>();
  let trips: RoundTrip[] = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    // The first ReadyForQuery of a connection ends its start-up, not a statement.
    let started = false;
    let sent: string[] = [];
    client.on(
      'data',
      messageReader(true, (type, body) => {
        if (type === 'Q') sent.push(cString(body, 0).text);
        if (type === 'P') sent.push(cString(body, cString(body, 0).next).text);
      }),
    );
    upstream.on(
      'data',
      messageReader(false, (type) => {
        if (type !== 'Z') return;
        if (started) trips.push({ statements: sent });
        started = true;
        sent = [];
      }),
    );
    client.pipe(upstream);
    upstream.pipe(client);
    closeTogether(client, upstream, sockets);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    urlFor(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      // No TLS through the proxy: its reader follows the protocol in the clear.
      url.searchParams.set('sslmode', 'disable');
      return url.toString();
    },
    take() {
      const taken = trips;
      trips = [];
      return taken;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A second composition of `harness`'s slotfeed that talks to Postgres through a proxy counting its round trips. */
export async function peerWithCountedRoundTrips(
  harness: Pick<SyncHarness, 'db' | 'spawnPeer'>,
): Promise<{ roundTrips: PostgresRoundTrips; peer: Peer }> {
  const database = new URL(harness.db.url);
  const roundTrips = await startPostgresRoundTrips({
    host: database.hostname,
    port: Number(database.port || 5432),
  });
  const peer = await harness.spawnPeer({ DATABASE_URL: roundTrips.urlFor(harness.db.url) });
  return { roundTrips, peer };
}
