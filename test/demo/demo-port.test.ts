// The demo's web port is in every feed URL it prints; a restart must print the same URLs (demo-port.ts).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import net from 'node:net';
import { chooseDemoWebPort, PREFERRED_WEB_PORT, type WebPortChoice } from '../../src/demo/demo-port.js';
import { describeListener } from '../../src/demo/process-table.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'slotfeed-demo-port-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * A machine whose listed ports are taken (by "pid 7 (other-app)"); any other asked for is free, and "any free
 * port" is 40001.
 */
const machine = (taken: number[]) => ({
  holdPort: async (preferred?: number) => ({
    port: preferred !== undefined && !taken.includes(preferred) ? preferred : 40_001,
    release: async () => undefined,
  }),
  holderOf: async (port: number) => (taken.includes(port) ? 'pid 7 (other-app)' : undefined),
});

/** A choice as the tests compare it: its port, its warning if any, and whether the port came held. */
const shown = ({ held, ...choice }: WebPortChoice) => ({ ...choice, held: held !== undefined });

describe('the demo web port', () => {
  it('is kept from the first run: 3000 taken then, so a free one, and that one again on the next run', async () => {
    const recordFile = path.join(dir, 'a');
    const first = await chooseDemoWebPort({
      ...machine([PREFERRED_WEB_PORT]),
      requested: undefined,
      recordFile,
    });
    // The README's addresses say 3000: the person is told, with who holds it.
    expect(first.port).toBe(40_001);
    expect(first.warning).toBe(
      "!! Port 3000, which the README's addresses use, is taken by pid 7 (other-app).\n" +
        '!! This demo serves on port 40001 (kept for its next runs): use the addresses printed below, not :3000.',
    );
    // 3000 is free now: the URLs of the first run still win.
    const second = await chooseDemoWebPort({ ...machine([]), requested: undefined, recordFile });
    expect(shown(second)).toEqual({ port: 40_001, held: true });
  });

  it('says loudly when the recorded port is taken, and keeps the record for the next run', async () => {
    const recordFile = path.join(dir, 'b');
    await writeFile(recordFile, '3000\n');
    const taken = await chooseDemoWebPort({ ...machine([3000]), requested: undefined, recordFile });
    expect(taken.port).toBe(40_001);
    expect(taken.warning).toMatch(
      /Port 3000, which this demo's feed URLs use, is taken by pid 7 \(other-app\)/,
    );
    expect(taken.warning).toMatch(/not the ones calendars subscribed to/);
    expect(await readFile(recordFile, 'utf8')).toBe('3000\n');
  });

  it('follows WEB_PORT and records it; WEB_PORT=0 takes any free port and records nothing', async () => {
    const recordFile = path.join(dir, 'c');
    // A port WEB_PORT names is not held here: run-demo.ts holds it if it can.
    expect(shown(await chooseDemoWebPort({ ...machine([]), requested: 3100, recordFile }))).toEqual({
      port: 3100,
      held: false,
    });
    expect(shown(await chooseDemoWebPort({ ...machine([]), requested: undefined, recordFile }))).toEqual({
      port: 3100,
      held: true,
    });
    expect(shown(await chooseDemoWebPort({ ...machine([]), requested: 0, recordFile }))).toEqual({
      port: 40_001,
      held: true,
    });
    expect(await readFile(recordFile, 'utf8')).toBe('3100\n');
  });

  it('refuses a damaged record with a message that says what to do', async () => {
    const recordFile = path.join(dir, 'd');
    await writeFile(recordFile, 'three thousand');
    await expect(chooseDemoWebPort({ ...machine([]), requested: undefined, recordFile })).rejects.toThrow(
      /does not hold a port number.*delete it/,
    );
  });

  it('names who listens on a port: here, this test process', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      expect(await describeListener(port)).toMatch(new RegExp(`^pid ${process.pid} \\(.*node`));
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(await describeListener(port)).toBeUndefined();
  });
});
