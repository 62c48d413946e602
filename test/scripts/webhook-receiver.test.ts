// scripts/webhook-receiver.mjs as a person runs it: its --help and a mistyped option answer in words (no
// ERR_PARSE_ARGS stack), --port 0 listens on a free port and prints which, a signed delivery is verified there,
// and the README's first hour gives it a port found free rather than a fixed one another program may hold.
import { spawn, spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { waitFor } from '../support/wait-for.js';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const script = fileURLToPath(new URL('../../scripts/webhook-receiver.mjs', import.meta.url));
const SECRET = `whsec_${Buffer.from('a webhook signing secret of 32 b').toString('base64')}`;

const receiver = (...args: string[]) =>
  spawnSync(process.execPath, [script, ...args], { cwd: projectRoot, encoding: 'utf8' });

describe('webhook-receiver.mjs', () => {
  it('--help prints its usage and exits 0', () => {
    const result = receiver('--help');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('--port <port>');
    expect(result.stdout).toContain('0 takes any free port');
    expect(result.stderr).toBe('');
  });

  it('an unknown option is one line of reason and the usage, exit 2, no stack', () => {
    const result = receiver('--bogus');
    expect(result.status).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe("webhook-receiver: Unknown option '--bogus'");
    expect(result.stderr).toContain('usage:');
    expect(result.stderr).not.toMatch(/ERR_PARSE_ARGS|\n\s+at /);
  });

  it('--free-port prints a port number', () => {
    const result = receiver('--free-port');
    expect(result.status).toBe(0);
    expect(Number(result.stdout.trim())).toBeGreaterThan(0);
  });

  it('--port 0 listens on a free port, prints it, and verifies a signed delivery there', async () => {
    const child = spawn(process.execPath, [script, '--port', '0', '--secret', SECRET], {
      cwd: projectRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      const line = await waitFor(
        async () => stdout,
        (out) => out.includes('\n') || child.exitCode !== null,
        { timeoutMs: 10_000, what: 'the listening line' },
      );
      const url = /listening on (http:\/\/127\.0\.0\.1:(\d+)\/)/.exec(line);
      expect(url).not.toBeNull();
      expect(Number(url![2])).toBeGreaterThan(0);
      const body = JSON.stringify({ type: 'connection.synced', data: {} });
      const id = 'msg_receiver_test';
      const at = new Date();
      const signature = new Webhook(SECRET).sign(id, at, body);
      const response = await fetch(url![1]!, {
        method: 'POST',
        headers: {
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body,
      });
      expect(response.status).toBe(204);
      await waitFor(
        async () => stdout,
        (out) => out.includes(`verified ${id}: connection.synced`),
        { what: 'the delivery line' },
      );
    } finally {
      child.kill('SIGINT');
      await exited;
    }
  });

  it('the README’s first hour starts it on a port found free, not a fixed one', async () => {
    const readme = await readFile(`${projectRoot}/README.md`, 'utf8');
    const fromMarker = readme.slice(readme.indexOf('<!-- first-hour -->'));
    const block = fromMarker.slice(0, fromMarker.indexOf('\n```\n', fromMarker.indexOf('```sh')));
    expect(block).toContain('port=$(node scripts/webhook-receiver.mjs --free-port)');
    expect(block).toContain('--url "http://127.0.0.1:$port/"');
    expect(block).toContain('node scripts/webhook-receiver.mjs --port "$port"');
    expect(block).not.toMatch(/127\.0\.0\.1:\d|--port \d/);
  });
});
