// `slotfeed destinations …` against a real Radicale and a synced connection's feed: a password only from stdin or
// SLOTFEED_CALDAV_PASSWORD (never an argument, never printed), add checks it on the server and a worker writes the
// feed (read back by python3-caldav), list shows it, pause/push/resume/reconcile/log/credentials act on it, and
// remove deletes the events it wrote (or keeps them). Usage errors exit 2, refusals 1.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CaldavDestinationRecord } from '../../src/store/caldav-destinations.js';
import { eventsOf } from '../feeds/feed-fixtures.js';
import { readBack, startCalDavServer, type CalDavTestServer } from '../support/caldav-servers.js';
import { runCapturedCli } from '../support/cli-run.js';
import { waitFor } from '../support/wait-for.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { patient } from '../support/patience.js';

let server: CalDavTestServer;
let h: WebHarness;
let feedId: string;
let feedToken: string;
let env: Record<string, string>;

const WRONG_PASSWORD = 'not-the-password-9d8e7f';

beforeAll(async () => {
  server = await startCalDavServer('radicale');
  // The real clock: the commands run on it, and what they ask for is answered by pushes that begin after it.
  h = await createWebHarness('cli_destinations', {
    clock: null,
    env: { CALDAV_ALLOW_PRIVATE_TARGETS: 'true', CALDAV_DISPATCH_INTERVAL_MS: '100' },
  });
  const connected = await h.connectViaWeb(h.sync.sim.users[0]!.email);
  await h.syncNow(connected.connectionId);
  feedToken = connected.token!;
  feedId = (await h.feeds.findByToken(feedToken))!.id;
  // The worker that writes what the commands ask for: a command itself queues nothing.
  await h.sync.startRoles(['worker']);
  env = {
    DATABASE_URL: h.sync.env.DATABASE_URL!,
    TOKEN_ENCRYPTION_KEY: h.sync.env.TOKEN_ENCRYPTION_KEY!,
    CALDAV_ALLOW_PRIVATE_TARGETS: 'true',
    LOG_LEVEL: 'silent',
  };
}, patient(60_000));
afterAll(async () => {
  await h?.close();
  await server?.close();
});

const slotfeed = (
  args: string[],
  input: { stdin?: string; stdinIsTTY?: boolean; env?: Record<string, string> } = {},
) => runCapturedCli({ ...env, ...input.env }, args, input);
const service = () => h.sync.services.caldavDestinations;
const addArgs = (...more: string[]) => [
  'destinations',
  'add',
  feedId,
  '--server',
  server.baseUrl,
  '--username',
  server.username,
  ...more,
];

const settled = (destinationId: string) =>
  waitFor(
    () => service().get(destinationId),
    (d) => d.pendingChanges === 0 && d.reconcileRequestedAt === null && d.lastPushAt !== null,
    { what: `destination ${destinationId} pushed` },
  );
const feedUids = async () =>
  eventsOf((await h.get(`/feeds/${feedToken}.ics`)).text)
    .map((event) => event.get('UID')!)
    .sort();
const calendarUids = async (destination: CaldavDestinationRecord) =>
  (await readBack(server, destination.calendarUrl))
    .filter((event) => event.marker === feedId)
    .map((event) => event.uid)
    .sort();

/** The real CLI in a child process, the password piped into its stdin. */
function slotfeedPiped(args: string[], stdin: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stdin.end(stdin);
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output })));
}

describe('the password', () => {
  it('is never an argument: no --password option, and without the variable or a pipe it says why (exit 2)', async () => {
    const asArgument = await slotfeed(addArgs('--password', server.password));
    expect(asArgument.code).toBe(2);
    expect(asArgument.stderr).toContain("unknown option '--password'");
    const none = await slotfeed(addArgs());
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no password given');
    expect(none.stderr).toContain('SLOTFEED_CALDAV_PASSWORD');
    expect(none.stderr).toContain('--password-stdin');
    const help = await slotfeed(['destinations', 'add', '--help']);
    expect(help.stdout).toMatch(/never an argument \(every user of the machine can read a command line/);
    expect(await service().list({ feedId })).toEqual([]);
  });

  it('--password-stdin refuses a terminal (it would show what is typed) and an empty pipe', async () => {
    const terminal = await slotfeed(addArgs('--password-stdin'), { stdinIsTTY: true });
    expect(terminal.code).toBe(2);
    expect(terminal.stderr).toContain('--password-stdin reads a pipe, not a terminal');
    const empty = await slotfeed(addArgs('--password-stdin'), { stdin: '\n' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('read no password');
  });

  it('a wrong one is refused by the server: exit 1, said plainly, nothing stored, the password not repeated', async () => {
    const refused = await slotfeed(addArgs('--password-stdin'), { stdin: `${WRONG_PASSWORD}\n` });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('The server refused this user name and password');
    expect(refused.stderr + refused.stdout).not.toContain(WRONG_PASSWORD);
    expect(await service().list({ feedId })).toEqual([]);
  });
});

describe('a destination through its life', () => {
  let destination: CaldavDestinationRecord;

  it(
    'add, the password piped into the real command: the server takes it and a worker writes the feed',
    async () => {
      const added = await slotfeedPiped(
        addArgs('--password-stdin', '--calendar', 'Free time'),
        `${server.password}\n`,
      );
      expect(added).toMatchObject({ code: 0 });
      expect(added.output).toMatch(/CalDAV destination [0-9a-f-]{36}: feed .* → "Free time"/);
      expect(added.output).not.toContain(server.password);
      [destination] = (await service().list({ feedId })) as [CaldavDestinationRecord];
      expect(destination).toMatchObject({ calendarName: 'Free time', username: server.username });
      await settled(destination.id);
      const expected = await feedUids();
      expect(expected.length).toBeGreaterThan(3);
      expect(await calendarUids(destination)).toEqual(expected);
    },
    patient(60_000),
  );

  it('list shows it with its state, as a table and as JSON, and never a password', async () => {
    const table = await slotfeed(['destinations', 'list']);
    expect(table.code).toBe(0);
    const row = table.stdout.split('\n').find((line) => line.startsWith(destination.id))!;
    expect(row).toContain('Free time');
    expect(row).toMatch(/\bactive\b/);
    const json = await slotfeed(['destinations', 'list', '--feed', feedId, '--format', 'json']);
    const listed = JSON.parse(json.stdout) as { destinations: Record<string, unknown>[] };
    expect(listed.destinations).toEqual([
      expect.objectContaining({ id: destination.id, state: 'active', pendingChanges: 0 }),
    ]);
    expect(json.stdout).not.toMatch(/password/i);
    expect(json.stdout).not.toContain(server.password);
    const otherFeed = await slotfeed(['destinations', 'list', '--feed', crypto.randomUUID()]);
    expect(otherFeed.stdout).toContain('No CalDAV destinations.');
  });

  it('pause refuses a push (exit 1); resume, reconcile and log do what they say', async () => {
    expect((await slotfeed(['destinations', 'pause', destination.id])).stdout).toMatch(/, paused\.\n$/);
    const refused = await slotfeed(['destinations', 'push', destination.id]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is paused: resume it first');
    expect((await slotfeed(['destinations', 'resume', destination.id])).stdout).toMatch(/, active\.\n$/);
    const reconciled = await slotfeed(['destinations', 'reconcile', destination.id]);
    expect(reconciled).toMatchObject({ code: 0 });
    expect((await service().get(destination.id)).reconcileRequestedAt).not.toBeNull();
    await settled(destination.id);
    const log = await slotfeed(['destinations', 'log', destination.id, '--format', 'json']);
    expect((JSON.parse(log.stdout) as { log: { kind: string }[] }).log.length).toBeGreaterThan(0);
  });

  it('credentials: a wrong password from the variable is refused and changes nothing; the right one is taken', async () => {
    const refused = await slotfeed(['destinations', 'credentials', destination.id], {
      env: { SLOTFEED_CALDAV_PASSWORD: WRONG_PASSWORD },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('The server refused this user name and password');
    expect(refused.stderr).not.toContain(WRONG_PASSWORD);
    const taken = await slotfeed(['destinations', 'credentials', destination.id], {
      env: { SLOTFEED_CALDAV_PASSWORD: server.password },
    });
    expect(taken).toMatchObject({ code: 0 });
    expect(taken.stdout).toContain('New credentials accepted by the server');
    expect(taken.stdout).not.toContain(server.password);
    await settled(destination.id);
  });

  it('remove deletes the events it wrote; --keep-events leaves them', async () => {
    const removed = await slotfeed(['destinations', 'remove', destination.id]);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain(`A worker deletes the ${(await feedUids()).length} event(s) it wrote`);
    expect(await service().list({ feedId })).toEqual([]);
    // Until the worker is done, `list` shows the calendar being left; then it is gone, and so are the events.
    await waitFor(
      async () =>
        JSON.parse((await slotfeed(['destinations', 'list', '--format', 'json'])).stdout) as {
          leaving: unknown[];
        },
      (listed) => listed.leaving.length === 0,
      { what: 'the cleanup done' },
    );
    expect(await calendarUids(destination)).toEqual([]);

    const again = await slotfeed(addArgs('--calendar', 'Kept'), {
      env: { SLOTFEED_CALDAV_PASSWORD: server.password },
    });
    expect(again.code).toBe(0);
    const [kept] = (await service().list({ feedId })) as [CaldavDestinationRecord];
    await settled(kept.id);
    const left = await slotfeed(['destinations', 'remove', kept.id, '--keep-events']);
    expect(left.stdout).toContain('the events it wrote were left in the calendar');
    expect(await calendarUids(kept)).toEqual(await feedUids());
  });

  it('add to a calendar whose removed destination’s cleanup waits for new credentials says it waits too', async () => {
    const first = await service().add({
      feedId,
      serverUrl: server.baseUrl,
      username: server.username,
      password: server.password,
      calendarName: 'Again',
    });
    await settled(first.id);
    await server.changePassword();
    await service().remove(first.id);
    await waitFor(
      () => service().cleanup(first.id),
      (cleanup) => cleanup?.state === 'needs_credentials',
      { what: 'the cleanup refused' },
    );
    const added = await slotfeed(addArgs('--calendar', 'Again'), {
      env: { SLOTFEED_CALDAV_PASSWORD: server.password },
    });
    expect(added.code).toBe(0);
    expect(added.stdout).toContain(
      'This destination waits until slotfeed has deleted the events of the destination removed from this ' +
        'calendar, then writes the whole feed there: that cleanup needs new credentials',
    );
    expect(added.stdout).not.toContain('within seconds');
    await service().abandonCleanup(first.id);
    const [second] = (await service().list({ feedId })) as [CaldavDestinationRecord];
    await settled(second.id);
    expect(await calendarUids(second)).toEqual(await feedUids());
    await service().remove(second.id, { keepEvents: true });
  });

  it('an id that is not one is a usage error; an unknown one a failure', async () => {
    const bad = await slotfeed(['destinations', 'pause', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('not a CalDAV destination id: "nope" (see `slotfeed destinations list`)');
    const unknown = await slotfeed(['destinations', 'pause', crypto.randomUUID()]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no CalDAV destination with id');
  });
});
