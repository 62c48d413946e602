// Loopback ports for the services the demo and the test fallbacks start. The port is found by binding and
// releasing it, so another process could take it in between: callers that spawn a server on it retry with a
// fresh port when the server cannot bind.
import net from 'node:net';

/** Resolves with the port once bound, or null when it is in use or not allowed. */
function bindLoopback(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(null));
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
      const address = server.address() as net.AddressInfo;
      server.close(() => resolve(address.port));
    });
  });
}

/** `preferred` when it is free on 127.0.0.1, else a free ephemeral port. */
export async function freeLoopbackPort(preferred?: number): Promise<number> {
  if (preferred !== undefined && preferred > 0) {
    const port = await bindLoopback(preferred);
    if (port !== null) return port;
  }
  const port = await bindLoopback(0);
  if (port === null) throw new Error('no free TCP port on 127.0.0.1');
  return port;
}
