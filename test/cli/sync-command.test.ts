import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCli } from '../../src/cli/program.js';
import { runSync } from '../../src/cli/sync-command.js';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';

let h: SyncHarness;
let ids: string[];

beforeAll(async () => {
  h = await createSyncHarness('sync-cli', { simulator: { users: 3 } });
  ids = [];
  for (const user of h.sim.users) ids.push(await h.connect(user.email));
});
afterAll(async () => {
  await h.close();
});

function capture(isTTY: boolean) {
  let text = '';
  return { out: { write: (t: string) => void (text += t), isTTY }, text: () => text };
}

describe('slotfeed sync', () => {
  it('--all --wait enqueues every active connection and reports when they finished, quietly in a pipe', async () => {
    await h.startRoles(['worker']);
    const { out, text } = capture(false);

    const result = await runSync(
      h.env,
      { connectionIds: [], all: true, wait: true, timeoutSeconds: 60 },
      out,
    );

    expect(result.failed).toBe(0);
    expect(text()).toBe(`Enqueued 3 sync job(s).\n3 completed, 0 failed\n`);
    const synced = await h.clients.prisma.connection.count({ where: { lastSyncOutcome: 'succeeded' } });
    expect(synced).toBe(3);
  });

  it('draws a progress bar on a terminal', async () => {
    const { out, text } = capture(true);
    await runSync(h.env, { connectionIds: [ids[0]!], all: false, wait: true, timeoutSeconds: 60 }, out);
    expect(text()).toMatch(/\r\[#+\] 1\/1 finished, 0 failed\n1 completed, 0 failed\n$/);
  });

  it('needs only the database and Redis, and says at once when no worker runs under the prefix', async () => {
    let stdout = '';
    let stderr = '';
    const io = {
      stdout: { write: (t: string) => void (stdout += t), isTTY: false },
      stderr: { write: (t: string) => void (stderr += t) },
    };
    const env = { DATABASE_URL: h.env.DATABASE_URL, REDIS_URL: h.env.REDIS_URL, LOG_LEVEL: 'silent' };
    // The worker started above runs under the harness's prefix: this one has none (keys under the harness's
    // prefix still, so its cleanup removes them). With the default --timeout of ten minutes, waiting for a
    // worker that is not there would outlast the test's own ceiling.
    const otherPrefix = `${h.env.REDIS_PREFIX}:elsewhere`;
    const code = await runCli(['sync', ids[1]!, '--wait'], { ...env, REDIS_PREFIX: otherPrefix }, io);
    expect(code).toBe(1);
    expect(stdout).toBe('Enqueued 1 sync job(s).\n');
    expect(stderr).toContain(`No worker is running under REDIS_PREFIX "${otherPrefix}"`);
    expect(stderr).toContain('they stay queued and run when one starts. Start one with `slotfeed worker`');

    stdout = '';
    expect(await runCli(['sync', ids[1]!, '--wait'], { ...env, REDIS_PREFIX: h.env.REDIS_PREFIX! }, io)).toBe(
      0,
    );
    expect(stdout).toBe('Enqueued 1 sync job(s).\n1 completed, 0 failed\n');
  });

  it('refuses an unknown connection id before enqueueing anything', async () => {
    const { out } = capture(false);
    await expect(
      runSync(
        h.env,
        {
          connectionIds: ['00000000-0000-4000-8000-000000000000'],
          all: false,
          wait: false,
          timeoutSeconds: 1,
        },
        out,
      ),
    ).rejects.toThrow(/no connection with id 00000000-0000-4000-8000-000000000000/);
  });

  it('refuses a disabled connection, or one waiting for its owner, saying how it syncs again; enqueues nothing', async () => {
    const [disabled, waiting] = [ids[1]!, ids[2]!];
    await h.clients.prisma.connection.update({ where: { id: disabled }, data: { status: 'disabled' } });
    await h.clients.prisma.connection.update({ where: { id: waiting }, data: { status: 'needs_reauth' } });
    const queued = () => h.clients.syncQueue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
    const before = await queued();
    let stderr = '';
    const io = {
      stdout: { write: () => undefined, isTTY: false },
      stderr: { write: (t: string) => void (stderr += t) },
    };

    expect(await runCli(['sync', ids[0]!, disabled, waiting], h.env, io)).toBe(1);
    expect(stderr).toBe(
      `slotfeed: connection ${disabled} is disabled, so it is not synced: enable it with ` +
        `\`slotfeed connections enable ${disabled}\` (or Enable on its admin page, /admin/connections/${disabled}): ` +
        "it then syncs at the scheduler's next tick.\n" +
        `connection ${waiting} needs re-authorisation, so it cannot be synced: its owner must connect the ` +
        'account again (the connect page, /connect): it then syncs by itself.\n' +
        'Nothing was enqueued.\n',
    );
    expect(await queued()).toEqual(before);

    await h.clients.prisma.connection.updateMany({
      where: { id: { in: [disabled, waiting] } },
      data: { status: 'active' },
    });
  });
});
