// The simulated world kept in a state file: what the control API and the OAuth flow changed is there after a
// close and a start with the same file, at the same simulated time the same slots are free, and a file that
// cannot be read stops the start instead of quietly becoming a fresh world.
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { RunningSimulator, SimulatorOptions, SimUserDetails } from '../../src/simulator/index.js';
import { startSimulator } from '../../src/simulator/index.js';
import type { TokenSet } from './sim-client.js';
import { apiGet, connectUser, REFERENCE_NOW, simHttp, slotKeys, tokenRequest } from './sim-client.js';

const DAY_MS = 86_400_000;

let dir: string;
let stateFile: string;
let now: Date;
const running = new Set<RunningSimulator>();

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'slotfeed-sim-state-'));
  stateFile = path.join(dir, 'simulator.json');
  now = new Date(REFERENCE_NOW);
});
afterEach(async () => {
  await Promise.all([...running].map((sim) => sim.close()));
  running.clear();
  await rm(dir, { recursive: true, force: true });
});

/** A simulator on the test's movable clock: `now` is the injected time, moved by the test, never waited for. */
async function start(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const sim = await startSimulator({ now: () => now, stateFile, ...options });
  running.add(sim);
  return sim;
}

/** The users of a world made from the seed now, without a state file. */
async function freshWorld(): Promise<SimUserDetails[]> {
  const sim = await startSimulator({ now: () => now });
  running.add(sim);
  return sim.control.listUsers();
}

async function restart(sim: RunningSimulator, options: SimulatorOptions = {}): Promise<RunningSimulator> {
  await sim.close();
  running.delete(sim);
  return start(options);
}

/** Every free slot of every event type in the coming 90 days, as the control API's slot rule answers. */
function allFreeSlots(sim: RunningSimulator): string[] {
  const from = now.toISOString();
  const to = new Date(now.getTime() + 90 * DAY_MS).toISOString();
  return sim.control
    .listUsers()
    .flatMap((user) => user.event_types.map((e) => e.event_id))
    .flatMap((eventId) => sim.control.slotsFor(eventId, from, to).map((start) => `${eventId} ${start}`));
}

function refresh(sim: RunningSimulator, refreshToken: string): Promise<Response> {
  return tokenRequest(sim, { grant_type: 'refresh_token', refresh_token: refreshToken });
}

async function refreshed(sim: RunningSimulator, refreshToken: string): Promise<TokenSet> {
  const response = await refresh(sim, refreshToken);
  expect(response.status).toBe(200);
  return (await response.json()) as TokenSet;
}

describe('a booking made through the control API', () => {
  it('is still there after a close and a start with the same state file: its slot stays taken', async () => {
    const sim = await start();
    const user = sim.control.listUsers()[0]!;
    const eventId = user.event_types[0]!.event_id;
    const to = new Date(now.getTime() + 14 * DAY_MS).toISOString();
    const query = new URLSearchParams({ eventId, from: now.toISOString(), to });
    const offered = (await simHttp(sim, 'GET', `/slots?${query}`)).json as string[];
    const slot = offered[0]!;
    // User 0 works 09:00–17:00 in Berlin: a slot's UTC date is its owner-local date.
    const date = slot.slice(0, 10);
    expect((await simHttp(sim, 'POST', '/bookings', { eventId, start: slot })).status).toBe(201);

    const again = await restart(sim);
    expect((await simHttp(again, 'GET', `/slots?${query}`)).json).toEqual(offered.slice(1));
    const { access_token: token } = await connectUser(again, 0);
    const apiSlots = await slotKeys(again, token, eventId, date, user.timezone);
    expect(apiSlots.length).toBeGreaterThan(0);
    expect(apiSlots).not.toContain(slot);
    expect(again.control.listUsers()[0]?.bookings).toContainEqual(
      expect.objectContaining({ event_id: eventId, start: slot }),
    );
    expect(again.control.changes()).toEqual([expect.objectContaining({ kind: 'booked', eventId })]);
    // Freed after the restart: offered again, and that survives the next restart too.
    expect((await simHttp(again, 'DELETE', '/bookings', { eventId, start: slot })).status).toBe(204);
    const third = await restart(again);
    expect((await simHttp(third, 'GET', `/slots?${query}`)).json).toEqual(offered);
  });
});

describe('the same world after a restart', () => {
  it('has the same free slots at the same simulated time, though it starts later than it was made', async () => {
    const sim = await start();
    // History, as the demo makes it: bookings over the days after the world was made.
    for (let day = 0; day < 5; day++) {
      now = new Date(Date.parse(REFERENCE_NOW) + day * DAY_MS);
      for (const user of sim.control.listUsers()) {
        const eventId = user.event_types.find((e) => e.enabled)?.event_id;
        if (!eventId) continue;
        const next = sim.control.slotsFor(
          eventId,
          now.toISOString(),
          new Date(now.getTime() + 7 * DAY_MS).toISOString(),
        );
        if (next[0]) sim.control.book(eventId, next[0]);
      }
    }
    const before = allFreeSlots(sim);
    const usersBefore = sim.control.listUsers();

    const again = await restart(sim);
    expect(allFreeSlots(again)).toEqual(before);
    expect(again.control.listUsers()).toEqual(usersBefore);
  });

  // One edit per restart: a later edit's write would otherwise carry an earlier one that failed to ask for one.
  const edits: [string, (sim: RunningSimulator, users: SimUserDetails[]) => void][] = [
    [
      'weekly hours',
      (sim, [a]) => sim.control.setWeeklyHours(a!.id, { mon: [{ start: '07:00', end: '08:00' }] }),
    ],
    [
      'disabled dates',
      (sim, [a]) => sim.control.setDisabledDates(a!.id, { days: ['2026-03-20'], months: [7] }),
    ],
    [
      'an event type patched',
      (sim, [a]) =>
        sim.control.updateEventType(a!.id, a!.event_types[0]!.event_id, {
          title: 'Renamed',
          max_days_ahead: 5,
        }),
    ],
    [
      'an event type deleted',
      (sim, [, b]) => sim.control.deleteEventType(b!.id, b!.event_types[0]!.event_id),
    ],
    [
      'a seeded booking freed',
      (sim, [a]) => sim.control.free(a!.bookings[0]!.event_id, a!.bookings[0]!.start),
    ],
  ];
  it.each(edits)('an edit through the control API (%s) is there after a restart', async (_what, edit) => {
    const sim = await start();
    edit(sim, sim.control.listUsers());
    const edited = sim.control.listUsers();
    expect(edited).not.toEqual(await freshWorld());

    const again = await restart(sim);
    expect(again.control.listUsers()).toEqual(edited);
  });

  it('is a fresh world, written at once, when the file does not exist yet', async () => {
    stateFile = path.join(dir, 'not-yet', 'simulator.json');
    const sim = await start();
    expect(sim.control.listUsers()).toEqual(await freshWorld());
    expect((await stat(stateFile)).isFile()).toBe(true);
  });
});

describe('OAuth grants across a restart', () => {
  it('a refresh token issued before the restart refreshes after it, and rotation still detects reuse', async () => {
    const sim = await start({ rotateRefreshTokens: true });
    const connected = await connectUser(sim, 0);
    const second = await refreshed(sim, connected.refresh_token);

    const again = await restart(sim, { rotateRefreshTokens: true });
    // The access token from before the restart still reads the API (a service restart logs nobody out).
    expect((await apiGet(again, '/users/me', second.access_token)).status).toBe(200);
    const third = await refreshed(again, second.refresh_token);
    expect((await apiGet(again, '/users/me', third.access_token)).status).toBe(200);
    // The token spent before the restart is still spent: presenting it revokes the whole grant.
    const reused = await refresh(again, connected.refresh_token);
    expect(reused.status).toBe(400);
    expect(((await reused.json()) as { error: string }).error).toBe('invalid_grant');
    expect((await refresh(again, third.refresh_token)).status).toBe(400);
    expect((await apiGet(again, '/users/me', third.access_token)).status).toBe(401);

    // And the revocation itself survives the next restart.
    const later = await restart(again, { rotateRefreshTokens: true });
    expect((await refresh(later, third.refresh_token)).status).toBe(400);
  });

  it('without rotation the one refresh token keeps working after restarts', async () => {
    const sim = await start();
    const connected = await connectUser(sim, 1);
    const again = await restart(sim);
    const answer = await refreshed(again, connected.refresh_token);
    expect(answer.refresh_token).toBeUndefined();
    expect((await apiGet(again, '/users/me', answer.access_token)).status).toBe(200);
    const later = await restart(again);
    await refreshed(later, connected.refresh_token);
  });

  it('grants revoked through the control API stay revoked', async () => {
    const sim = await start();
    const connected = await connectUser(sim, 0);
    expect((await simHttp(sim, 'POST', `/users/${sim.users[0]!.id}/revoke`)).json).toEqual({ revoked: 1 });
    const again = await restart(sim);
    expect((await refresh(again, connected.refresh_token)).status).toBe(400);
    expect((await apiGet(again, '/users/me', connected.access_token)).status).toBe(401);
  });
});

describe('the state file', () => {
  it('is readable and writable by its owner only, and no half-written file is left beside it', async () => {
    const sim = await start();
    await connectUser(sim, 0);
    await sim.close();
    expect((await stat(stateFile)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['simulator.json']);
  });

  it('a damaged file stops the start with an error naming it and what to do, and is left as it was', async () => {
    await writeFile(stateFile, '{"format":"calendbook-simulator-state","vers');
    const failed = start();
    await expect(failed).rejects.toThrow(stateFile);
    await expect(failed).rejects.toThrow(/delete it/i);
    await expect(failed).rejects.toMatchObject({ name: 'SimulatorStateError' });
    expect(await readFile(stateFile, 'utf8')).toBe('{"format":"calendbook-simulator-state","vers');
  });

  it('a path that cannot be read stops the start with an error naming it', async () => {
    await writeFile(path.join(dir, 'a-file'), '');
    stateFile = path.join(dir, 'a-file', 'simulator.json');
    await expect(start()).rejects.toThrow(`Simulator state file ${stateFile} cannot be read (ENOTDIR)`);
  });

  it('a file of another format version, or of another seed, is refused the same way', async () => {
    const sim = await start();
    await sim.close();
    running.delete(sim);
    const written = JSON.parse(await readFile(stateFile, 'utf8')) as Record<string, unknown>;

    await writeFile(stateFile, JSON.stringify({ ...written, version: 999 }));
    await expect(start()).rejects.toThrow(/version 999/);

    await writeFile(stateFile, JSON.stringify(written));
    const otherSeed = start({ seed: 2 });
    await expect(otherSeed).rejects.toThrow(stateFile);
    await expect(otherSeed).rejects.toThrow(/seed 1/);

    await writeFile(stateFile, JSON.stringify({ ...written, users: 'nobody' }));
    await expect(start()).rejects.toThrow(/delete it/i);
  });
});
