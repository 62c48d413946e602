// The demo chooses its web port before its simulator listens on port 0; a chosen port merely released could be
// handed to the simulator, and the web role's listen then failed with EADDRINUSE (seen in CI). So the demo holds
// the port until the web role listens (free-port.ts).
import net from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { freeLoopbackPort, holdFreeLoopbackPort, holdLoopbackPort } from '../../src/demo/free-port.js';

/** Listens on 127.0.0.1:`port`; resolves with the server, or with the bind error's code. */
function listenOn(port: number): Promise<net.Server | string> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    server.listen({ host: '127.0.0.1', port }, () => resolve(server));
  });
}

const close = (server: net.Server) => new Promise<void>((done) => server.close(() => done()));

describe('a held loopback port', () => {
  it('cannot be listened on by anyone until released, then can be', async () => {
    const held = await holdLoopbackPort(await freeLoopbackPort());
    if (held === null) throw new Error('no port to hold');
    expect(await listenOn(held.port)).toBe('EADDRINUSE');

    await held.release();
    await held.release();
    const after = await listenOn(held.port);
    expect(after).toBeInstanceOf(net.Server);
    await close(after as net.Server);
  });

  it('is null when another program listens there', async () => {
    const other = (await listenOn(0)) as net.Server;
    const port = (other.address() as net.AddressInfo).port;
    expect(await holdLoopbackPort(port)).toBeNull();
    await close(other);
  });

  it('is the preferred one when it is free, else another, held from the moment it was found free', async () => {
    const other = (await listenOn(0)) as net.Server;
    const taken = (other.address() as net.AddressInfo).port;
    const instead = await holdFreeLoopbackPort(taken);
    expect(instead.port).not.toBe(taken);
    expect(await listenOn(instead.port)).toBe('EADDRINUSE');
    await instead.release();
    await close(other);

    const preferred = await holdFreeLoopbackPort(taken);
    expect(preferred.port).toBe(taken);
    expect(await listenOn(taken)).toBe('EADDRINUSE');
    await preferred.release();
  });
});
