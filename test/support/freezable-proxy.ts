// A TCP proxy in front of a real server whose existing connections can be frozen: bytes stop flowing both ways
// while the sockets stay open, as when a NAT or a failed-over address drops a connection without telling either
// end. Connections made after the freeze flow normally.
import net from 'node:net';

export interface FreezableProxy {
  port: number;
  /** Bytes carried so far: from clients to the server, and back (what a benchmark counts as one side's egress). */
  bytes(): { toServer: number; toClient: number };
  /** Stops every connection open now from carrying data; neither end is told. */
  freezeExisting(): void;
  close(): Promise<void>;
}

export async function startFreezableProxy(target: { host: string; port: number }): Promise<FreezableProxy> {
  const pairs = new Set<{ client: net.Socket; upstream: net.Socket }>();
  const carried = { toServer: 0, toClient: 0 };
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    const pair = { client, upstream };
    pairs.add(pair);
    client.on('data', (chunk: Buffer) => (carried.toServer += chunk.length));
    upstream.on('data', (chunk: Buffer) => (carried.toClient += chunk.length));
    client.pipe(upstream);
    upstream.pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    bytes: () => ({ ...carried }),
    freezeExisting() {
      for (const { client, upstream } of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    async close() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
