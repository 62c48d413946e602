// A test proxy's two sockets for one connection (the client's and the server's) live and die together: when
// either ends or fails, both are destroyed and forgotten, so the proxy's close() has nothing left to wait for.
import type net from 'node:net';

export function closeTogether(client: net.Socket, upstream: net.Socket, sockets: Set<net.Socket>): void {
  const drop = () => {
    client.destroy();
    upstream.destroy();
    sockets.delete(client);
    sockets.delete(upstream);
  };
  client.on('error', drop).on('close', drop);
  upstream.on('error', drop).on('close', drop);
}
