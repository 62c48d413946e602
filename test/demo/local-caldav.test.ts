// The demo's CalDAV server (local-caldav.ts, caldav-server-process.ts): found on PATH or as a python module, a real
// Radicale started on loopback with the demo's user, its calendars and port kept in the data directory, in a
// process group of its own (a terminal's Ctrl-C must not stop it before the demo's workers), stopped cleanly; and
// when none is installed, one line that says how to get one. The demo's secrets gain the CalDAV password, and a
// demo.json written before it existed still loads.
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../src/config.js';
import { DAEMON_SECTIONS } from '../../src/composition/daemon-config.js';
import { findCalDavServer } from '../../src/demo/caldav-server-process.js';
import { demoEnvironment } from '../../src/demo/demo-env.js';
import { loadOrCreateDemoSecrets, newDemoSecrets } from '../../src/demo/demo-secrets.js';
import {
  describeLocalCalDav,
  NO_CALDAV_SERVER,
  resolveLocalCalDav,
  type LocalCalDav,
} from '../../src/demo/local-caldav.js';
import { createLogger } from '../../src/log.js';
import { isAlive, processGroupOf } from '../support/processes.js';

const logger = createLogger({ level: 'silent' });
let workDir: string;

/** A PROPFIND of the user's home as a CalDAV client sends it: its status. */
async function propfindStatus(baseUrl: string, user: string, password: string): Promise<number> {
  const response = await fetch(new URL(`/${user}/`, baseUrl), {
    method: 'PROPFIND',
    headers: {
      Depth: '0',
      Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
    },
  });
  await response.body?.cancel();
  return response.status;
}

beforeAll(async () => {
  workDir = await mkdtemp(path.join(os.tmpdir(), 'slotfeed-local-caldav-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

describe('the demo’s secrets', () => {
  it('hold a CalDAV password from the start', async () => {
    const { secrets } = await loadOrCreateDemoSecrets(path.join(workDir, 'fresh', 'demo.json'));
    expect(secrets.caldavPassword.length).toBeGreaterThanOrEqual(16);
  });

  it('a demo.json written before the CalDAV password existed still loads, gains one, and keeps it', async () => {
    const file = path.join(workDir, 'old', 'demo.json');
    const { caldavPassword: _, ...old } = newDemoSecrets();
    await mkdir(path.dirname(file));
    await writeFile(file, JSON.stringify(old), { mode: 0o600 });

    const first = await loadOrCreateDemoSecrets(file);
    expect(first.created).toBe(false);
    expect(first.secrets).toEqual({ ...old, caldavPassword: expect.any(String) });
    expect(first.secrets.caldavPassword.length).toBeGreaterThanOrEqual(16);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await loadOrCreateDemoSecrets(file)).toEqual({ secrets: first.secrets, created: false });
  });
});

describe('the demo’s configuration', () => {
  it('allows CalDAV servers on this machine (the demo’s own), as the daemon’s default does not', () => {
    const config = loadConfig(
      demoEnvironment({
        env: {},
        databaseUrl: 'postgresql://postgres:pw@127.0.0.1:55432/slotfeed',
        redisUrl: 'redis://127.0.0.1:6379',
        redisPrefix: 'slotfeed-demo',
        logLevel: 'warn',
        simulator: {
          baseUrl: 'http://127.0.0.1:4010/api',
          authUrl: 'http://127.0.0.1:4010/auth',
          clientId: 'slotfeed-local',
          clientSecret: 'slotfeed-local-secret',
        },
        webPort: 3001,
        publicBaseUrl: 'http://127.0.0.1:3001',
        secrets: newDemoSecrets(),
      }),
      DAEMON_SECTIONS,
    );
    expect(config.caldav.allowPrivateTargets).toBe(true);
    expect(loadConfig({}, ['caldav']).caldav.allowPrivateTargets).toBe(false);
  });
});

describe('finding a CalDAV server', () => {
  const noModules = async () => false;

  it('prefers Radicale’s executable on PATH (Debian’s package)', async () => {
    const bin = path.join(workDir, 'bin-both');
    await mkdir(bin);
    for (const name of ['radicale', 'xandikos']) {
      await writeFile(path.join(bin, name), '#!/bin/sh\n');
      await chmod(path.join(bin, name), 0o755);
    }
    expect(await findCalDavServer(bin, noModules)).toEqual({
      kind: 'radicale',
      command: path.join(bin, 'radicale'),
      prefix: [],
    });
  });

  it('else a module of the python3 on PATH (pip install radicale)', async () => {
    const bin = path.join(workDir, 'bin-python');
    await mkdir(bin);
    await writeFile(path.join(bin, 'python3'), '#!/bin/sh\n');
    await chmod(path.join(bin, 'python3'), 0o755);
    const asked: string[] = [];
    const found = await findCalDavServer(bin, async (_python, module) => {
      asked.push(module);
      return module === 'xandikos';
    });
    expect(asked).toEqual(['radicale', 'xandikos']);
    expect(found).toEqual({
      kind: 'xandikos',
      command: path.join(bin, 'python3'),
      prefix: ['-m', 'xandikos'],
    });
  });

  it('none installed: the demo says so in one line, with how to get one', async () => {
    const empty = path.join(workDir, 'bin-empty');
    await mkdir(empty);
    expect(await findCalDavServer(empty)).toBeNull();
    const local = await resolveLocalCalDav({
      pathEnv: empty,
      dir: path.join(workDir, 'unused'),
      username: 'demo',
      password: 'demo-password',
      logger,
    });
    expect(local).toEqual({ state: 'none' });
    const line = describeLocalCalDav(local);
    expect(line).toBe(NO_CALDAV_SERVER);
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toContain('apt-get install radicale');
  });
});

describe('the demo’s Radicale', () => {
  const dir = () => path.join(workDir, 'data', 'caldav');
  const start = () =>
    resolveLocalCalDav({
      pathEnv: '/usr/bin',
      dir: dir(),
      username: 'demo',
      password: 'the-demo-password',
      logger,
    });
  const started = (local: LocalCalDav) => {
    if (local.state !== 'started') throw new Error(`not started: ${JSON.stringify(local)}`);
    return local;
  };

  it('starts on loopback in a process group of its own, checks the demo’s password, and stops', async () => {
    const local = started(await start());
    try {
      expect(local.server.kind).toBe('radicale');
      expect(local.server.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      expect(describeLocalCalDav(local)).toBe(
        `CalDAV: Radicale started (pid ${local.server.pid}, ${local.server.baseUrl}, calendars in ${dir()})`,
      );
      expect(await processGroupOf(local.server.pid)).not.toBe(await processGroupOf(process.pid));
      expect(await propfindStatus(local.server.baseUrl, 'demo', 'the-demo-password')).toBe(207);
      expect(await propfindStatus(local.server.baseUrl, 'demo', 'a-wrong-password')).toBe(401);
      expect(await readFile(path.join(dir(), 'port'), 'utf8')).toBe(`${local.server.port}\n`);
    } finally {
      await local.server.stop();
    }
    expect(isAlive(local.server.pid)).toBe(false);
    await local.server.stop();
  });

  it('comes back on the same port with the same calendars; on another when that port is taken', async () => {
    const first = started(await start());
    await first.server.stop();
    const again = started(await start());
    try {
      expect(again.server.port).toBe(first.server.port);
      // The recorded port taken by another program: a free one, recorded for next time.
      const third = started(await start());
      try {
        expect(third.server.port).not.toBe(again.server.port);
        expect(await readFile(path.join(dir(), 'port'), 'utf8')).toBe(`${third.server.port}\n`);
      } finally {
        await third.server.stop();
      }
    } finally {
      await again.server.stop();
    }
  });
});
