// A TCP proxy of the tests' own in front of a real redis-server that makes chosen commands fail there: a command a
// fault picks is swapped, on its way, for one Redis does not know, so the real server answers it with an error in
// its place in the reply stream (as it answers a command it refuses: OOM, NOPERM, a script error), and every other
// command goes through as sent. The client sees a Redis that fails one command in the middle of its work.
import net from 'node:net';
import { closeTogether } from './socket-pair.js';

/** Whether the command (its name and arguments, as sent) is to fail. */
export type RedisFault = (command: string[]) => boolean;

export interface RedisFaultProxy {
  url: string;
  /** The next command `picks` chooses fails; once it has, the proxy forwards everything again. */
  failOnce(picks: RedisFault): void;
  close(): Promise<void>;
}

/** Redis answers it with `-ERR unknown command`, in order with the replies around it. */
const FAILING_NAME = 'SLOTFEED-INJECTED-FAULT';
const FAILING_COMMAND = Buffer.from(`*1\r\n$${FAILING_NAME.length}\r\n${FAILING_NAME}\r\n`);

/** One whole RESP command (an array of bulk strings, as clients send) at the start of `buffer`, if it is all there. */
function firstCommand(buffer: Buffer): { command: string[]; length: number } | undefined {
  const lineEnd = (from: number) => {
    const at = buffer.indexOf('\r\n', from);
    return at < 0 ? undefined : at;
  };
  if (buffer.length === 0) return undefined;
  if (buffer[0] !== 0x2a) throw new Error('the Redis fault proxy reads RESP arrays only');
  let end = lineEnd(0);
  if (end === undefined) return undefined;
  const count = Number(buffer.toString('latin1', 1, end));
  let position = end + 2;
  const command: string[] = [];
  for (let i = 0; i < count; i++) {
    end = lineEnd(position);
    if (end === undefined) return undefined;
    const size = Number(buffer.toString('latin1', position + 1, end));
    const start = end + 2;
    if (buffer.length < start + size + 2) return undefined;
    command.push(buffer.toString('utf8', start, start + size));
    position = start + size + 2;
  }
  return { command, length: position };
}

export async function startRedisFaultProxy(target: { port: number }): Promise<RedisFaultProxy> {
  let fault: RedisFault | undefined;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, '127.0.0.1');
    sockets.add(client).add(upstream);
    let pending = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (let next = firstCommand(pending); next !== undefined; next = firstCommand(pending)) {
        const sent = pending.subarray(0, next.length);
        pending = pending.subarray(next.length);
        if (fault?.(next.command)) {
          fault = undefined;
          upstream.write(FAILING_COMMAND);
        } else {
          upstream.write(sent);
        }
      }
    });
    upstream.pipe(client);
    closeTogether(client, upstream, sockets);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    failOnce: (picks) => {
      fault = picks;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
