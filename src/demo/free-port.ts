// Loopback ports for the services the demo and the test fallbacks start. The port is found by binding and
// releasing it, so another process could take it in between: callers that spawn a server on it retry with a
// fresh port when the server cannot bind. A port the demo's own process must listen on later is held instead
// (holdLoopbackPort): a released port is free for the kernel to hand to the next listener on port 0, the
// demo's simulator included.
import net from 'node:net';

export interface HeldPort {
  port: number;
  /** Closes the placeholder listener; resolves once the port can be bound again. Safe to call twice. */
  release(): Promise<void>;
}

/** Resolves with the port held by a listener that accepts nothing, or null when it is in use or not allowed. */
export function holdLoopbackPort(port: number): Promise<HeldPort | null> {
  return new Promise((resolve) => {
    const server = net.createServer((socket) => socket.destroy());
    server.once('error', () => resolve(null));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
      let released: Promise<void> | undefined;
      resolve({
        port: (server.address() as net.AddressInfo).port,
        release: () => (released ??= new Promise((done) => server.close(() => done()))),
      });
    });
  });
}

/** Holds `preferred` when it is free on 127.0.0.1, else a free ephemeral port. */
export async function holdFreeLoopbackPort(preferred?: number): Promise<HeldPort> {
  if (preferred !== undefined && preferred > 0) {
    const held = await holdLoopbackPort(preferred);
    if (held !== null) return held;
  }
  const held = await holdLoopbackPort(0);
  if (held === null) throw new Error('no free TCP port on 127.0.0.1');
  return held;
}

/** `preferred` when it is free on 127.0.0.1, else a free ephemeral port: found free, and released. */
export async function freeLoopbackPort(preferred?: number): Promise<number> {
  const held = await holdFreeLoopbackPort(preferred);
  await held.release();
  return held.port;
}
