// A role's close(): what its start() started is released newest first, once however often close() is called,
// past a part whose release fails; the failure reaches the process's shutdown with the part's name.
import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { Releasers } from '../../src/lib/releasers.js';
import { createHealthRole } from '../../src/roles/health-role.js';
import { startedParts } from '../../src/roles/role.js';
import { createMetrics } from '../../src/lib/metrics.js';
import { createLogger } from '../../src/log.js';

describe('a role closing', () => {
  it('releases its parts newest first, once when closed twice, and names the part that failed', async () => {
    const released: string[] = [];
    const parts = startedParts();
    parts.add('sync worker', () => void released.push('sync worker'));
    parts.add('webhook worker', async () => {
      released.push('webhook worker');
      throw new Error('connection is closed');
    });
    parts.add('listener', () => void released.push('listener'));

    const [first, second] = await Promise.allSettled([parts.close(), parts.close()]);

    expect(released).toEqual(['listener', 'webhook worker', 'sync worker']);
    expect(first).toEqual({ status: 'rejected', reason: expect.any(Error) });
    expect((first as PromiseRejectedResult).reason.message).toBe('webhook worker: connection is closed');
    expect(second).toEqual(first);
  });

  it('reports a failing role to the process shutdown, which goes on to release the rest', async () => {
    const process = new Releasers();
    const released: string[] = [];
    process.add('redis', () => void released.push('redis'));
    const parts = startedParts();
    parts.add('scheduler', () => {
      throw new Error('tick queue gone');
    });
    process.add('scheduler role', () => parts.close());

    const failures = await process.releaseAll();

    expect(failures.map((e) => e.message)).toEqual(['scheduler: tick queue gone']);
    expect(released).toEqual(['redis']);
  });

  it('stops the health server on close, and a second close does nothing more', async () => {
    const lines: string[] = [];
    const logger = createLogger({
      level: 'info',
      destination: new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(chunk.toString('utf8'));
          done();
        },
      }),
    });
    const role = createHealthRole({
      server: {
        host: '127.0.0.1',
        port: 0,
        readiness: { checks: {}, primary: [] },
        metrics: createMetrics(),
        logger,
      },
      logger,
    });
    await role.start();
    const said = lines.map((line) => JSON.parse(line) as { msg: string; url?: string });
    const url = said.find((line) => line.msg === 'health server listening')?.url;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    await Promise.all([role.close(), role.close()]);

    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});
