// A worker's line at each CalDAV host (issue 43), on the real per-host slots in Redis: a push that finds every slot
// taken waits ready in line and gets the slot another push of this worker lets go at once, not after a wait in
// the delayed set; a line holds a bounded number, the next is sent back and parked, and each place given up brings
// the oldest parked push back; a slot let go by another worker is found by the first in line asking again; a hold
// (Retry-After) is answered at once, in line or not. No test here waits for a time: the line's own retry is set
// to an hour, so only a slot let go can move it.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { createHostGate, type HostGate, type HostPlace } from '../../src/destinations/host-gate.js';
import {
  createHostLimits,
  isHostWait,
  type HostLimits,
  type HostSlots,
  type HostWait,
} from '../../src/destinations/host-limits.js';
import { createTestRedis, type TestRedis } from '../support/redis.js';

const HOUR_MS = 3600_000;
let redis: TestRedis;
let limitsOf: (concurrency: number) => HostLimits;
let hostCount = 0;
/** A host of the test's own: no slot of another test in its way. */
const newHost = () => `dav${++hostCount}.example.com`;

beforeAll(async () => {
  redis = await createTestRedis('host_gate');
  limitsOf = (concurrency) =>
    createHostLimits(redis.connection, {
      concurrency,
      perSecond: 0,
      slotTimeoutMs: 60_000,
      keyPrefix: `${redis.prefix}:caldav-host`,
    });
});
afterAll(async () => {
  await redis?.cleanup();
});

const slotsOf = (entered: HostSlots | HostWait): HostSlots => {
  if (isHostWait(entered)) throw new Error(`expected slots, got a wait: ${JSON.stringify(entered)}`);
  return entered;
};

/** The host's line has a place free: one is taken and left again. */
const expectAPlace = (gate: HostGate, host: string) => {
  const place = gate.takePlace(host);
  expect(isHostWait(place)).toBe(false);
  (place as HostPlace).leave();
};

it('a push that finds the host busy waits in line, ready, and takes the slot this worker lets go', async () => {
  const host = newHost();
  const gate = createHostGate(limitsOf(1), { waitingPerHost: 2, pollMs: HOUR_MS });
  const first = slotsOf(await gate.enter(host, 1));
  const second = gate.enter(host, 1);
  const third = gate.enter(host, 1);
  // Two wait in line: the line is full now, and a push coming now is sent back before it renders anything.
  const fourth = gate.takePlace(host);
  expect(isHostWait(fourth) && fourth.reason).toBe('busy');
  await first.release();
  const secondSlots = slotsOf(await second);
  expect(secondSlots.lanes).toBe(1);
  await secondSlots.release();
  await slotsOf(await third).release();
  expectAPlace(gate, host);
});

it('a place is taken before the feed is read: pushes still reading fill the line, and a place left frees', async () => {
  const host = newHost();
  const gate = createHostGate(limitsOf(1), { waitingPerHost: 2, pollMs: HOUR_MS });
  const reading = gate.takePlace(host) as HostPlace;
  const alsoReading = gate.takePlace(host) as HostPlace;
  expect(isHostWait(reading) || isHostWait(alsoReading)).toBe(false);
  // Neither waits for a slot yet, but the line is full: the next push is sent back before it reads anything.
  const sentBack = gate.takePlace(host);
  expect(isHostWait(sentBack) && sentBack.reason).toBe('busy');
  // One had nothing to write: its place is the next push's. Leaving twice frees it once.
  alsoReading.leave();
  alsoReading.leave();
  const next = gate.takePlace(host) as HostPlace;
  expect(isHostWait(next)).toBe(false);
  expect(isHostWait(gate.takePlace(host))).toBe(true);
  // Entering waits in line and gives the place up with the slots: a place is entered once.
  await slotsOf(await reading.enter(1)).release();
  await expect(reading.enter(1)).rejects.toThrow('entered once');
  next.leave();
  expectAPlace(gate, host);
});

/** A parked push's resume that records it, as the worker's would start it. */
const recorder = () => {
  const resumed: string[] = [];
  return { resumed, resume: (key: string) => async () => Boolean(resumed.push(key)) };
};

it('a place left without a slot let go (nothing to write) brings the oldest parked push back', async () => {
  const host = newHost();
  const gate = createHostGate(limitsOf(1), { waitingPerHost: 1, pollMs: HOUR_MS });
  const { resumed, resume } = recorder();
  const reading = gate.takePlace(host) as HostPlace;
  expect(isHostWait(gate.takePlace(host))).toBe(true);
  gate.park(host, 'job-1', resume('job-1'));
  expect(gate.isParked('job-1')).toBe(true);
  reading.leave();
  expect(resumed).toEqual(['job-1']);
  expect(gate.isParked('job-1')).toBe(false);
  // Left twice, it brings back no second one.
  const again = gate.takePlace(host) as HostPlace;
  gate.park(host, 'job-2', resume('job-2'));
  gate.park(host, 'job-2b', resume('job-2b'));
  again.leave();
  again.leave();
  expect(resumed).toEqual(['job-1', 'job-2']);
  expect(gate.isParked('job-2b')).toBe(true);
  gate.unpark('job-2b');
  // Parked once its line has a place free again (every place given up between the check and the parking): it
  // comes back at once, or nothing would bring it back.
  gate.park(host, 'job-3', resume('job-3'));
  expect(resumed).toEqual(['job-1', 'job-2', 'job-3']);
  expect(gate.isParked('job-3')).toBe(false);
});

it('a place given up for slots brings the oldest parked push back: it reads while the one before talks', async () => {
  const host = newHost();
  const gate = createHostGate(limitsOf(1), { waitingPerHost: 1, pollMs: HOUR_MS });
  const { resumed, resume } = recorder();
  const first = slotsOf(await gate.enter(host, 1));
  const waiting = gate.enter(host, 1);
  const sentBack = await gate.enter(host, 1);
  expect(isHostWait(sentBack) && sentBack.reason).toBe('busy');
  gate.park(host, 'job-1', resume('job-1'));
  // One that can no longer come (its worker closing) is passed over for the next.
  gate.park(host, 'job-2', async () => false);
  gate.park(host, 'job-3', resume('job-3'));
  gate.park(host, 'job-4', resume('job-4'));
  // A slot let go is handed to the push in line, whose place is given up: the oldest parked push comes back.
  await first.release();
  const second = slotsOf(await waiting);
  expect(resumed).toEqual(['job-1']);
  const reading = gate.takePlace(host) as HostPlace;
  expect(isHostWait(reading)).toBe(false);
  // A slot let go with no place given up brings none back.
  await second.release();
  expect(resumed).toEqual(['job-1']);
  expect(gate.isParked('job-2')).toBe(true);
  // Brought back by its job meanwhile: no longer parked, and not brought back twice.
  gate.unpark('job-3');
  expect(gate.isParked('job-3')).toBe(false);
  reading.leave();
  await new Promise((resolve) => setImmediate(resolve));
  expect(resumed).toEqual(['job-1', 'job-4']);
  expect(gate.isParked('job-2')).toBe(false);
});

it('a hold another process set, met in line, is kept by this one: its parked pushes are let go', async () => {
  const host = newHost();
  const limits = limitsOf(1);
  const gate = createHostGate(limits, { waitingPerHost: 1, pollMs: HOUR_MS });
  const { resumed, resume } = recorder();
  const reading = gate.takePlace(host) as HostPlace;
  gate.park(host, 'job-1', resume('job-1'));
  // Another worker process had the host's 429: the hold is in Redis only.
  await createHostGate(limits, { waitingPerHost: 1, pollMs: HOUR_MS }).holdBack(host, HOUR_MS);
  try {
    const entered = await reading.enter(1);
    expect(isHostWait(entered) && entered.reason).toBe('held back');
    // Its place given up brings no parked push back to read its feed for a slot it cannot have.
    expect(resumed).toEqual([]);
    expect(gate.isParked('job-1')).toBe(false);
  } finally {
    await redis.connection.del(`${redis.prefix}:caldav-host:rate:${host}:paused-until`);
  }
});

it('while its host is held back, a place given up lets the parked pushes go rather than bring one back', async () => {
  const host = newHost();
  const gate = createHostGate(limitsOf(1), { waitingPerHost: 1, pollMs: HOUR_MS });
  const { resumed, resume } = recorder();
  const reading = gate.takePlace(host) as HostPlace;
  gate.park(host, 'job-1', resume('job-1'));
  gate.park(host, 'job-2', resume('job-2'));
  await gate.holdBack(host, HOUR_MS);
  try {
    reading.leave();
    // None comes back to read its feed for a slot it cannot have: they are queued again by the dispatcher.
    expect(resumed).toEqual([]);
    expect(gate.isParked('job-1') || gate.isParked('job-2')).toBe(false);
  } finally {
    await redis.connection.del(`${redis.prefix}:caldav-host:rate:${host}:paused-until`);
  }
});

it('a slot another worker lets go is taken by the first in line asking again', async () => {
  const host = newHost();
  const otherWorker = limitsOf(1);
  const taken = slotsOf(await otherWorker.enter(host, 1));
  const gate = createHostGate(limitsOf(1), { waitingPerHost: 1, pollMs: 10 });
  const waiting = gate.enter(host, 1);
  await taken.release();
  await slotsOf(await waiting).release();
});

it('a host held back answers at once, in line or not, with how long to wait', async () => {
  const host = newHost();
  const limits = limitsOf(1);
  const gate = createHostGate(limits, { waitingPerHost: 2, pollMs: HOUR_MS });
  const first = slotsOf(await gate.enter(host, 1));
  const waiting = gate.enter(host, 1);
  await gate.holdBack(host, 60_000);
  await first.release();
  const held = await waiting;
  expect(isHostWait(held) && held.reason).toBe('held back');
  const next = await gate.enter(host, 1);
  expect(isHostWait(next) && next.reason).toBe('held back');
  expectAPlace(gate, host);
});

it('a slot let go goes straight to the push in line: held in Redis throughout, with no ask there', async () => {
  const host = newHost();
  const limits = limitsOf(1);
  let asks = 0;
  let askAnswered: () => void = () => undefined;
  const counted: HostLimits = {
    ...limits,
    enter: async (...args) => {
      const entered = await limits.enter(...args);
      asks += 1;
      askAnswered();
      return entered;
    },
  };
  const gate = createHostGate(counted, { waitingPerHost: 1, pollMs: HOUR_MS });
  const first = slotsOf(await gate.enter(host, 1));
  const secondAsked = new Promise<void>((resolve) => (askAnswered = resolve));
  const second = gate.enter(host, 1);
  // The second push asked once, found the host busy, and waits in line.
  await secondAsked;
  await new Promise((resolve) => setImmediate(resolve));
  expect(asks).toBe(2);

  const otherWorker = limitsOf(1);
  await first.release();
  const secondSlots = slotsOf(await second);
  expect(secondSlots.lanes).toBe(1);
  expect(asks).toBe(2);
  // Never free in between: another worker asking after the handover finds the host busy.
  const meanwhile = await otherWorker.enter(host, 1);
  expect(isHostWait(meanwhile) && meanwhile.reason).toBe('busy');
  // With no one in line, the slot goes back to Redis.
  await secondSlots.release();
  await slotsOf(await otherWorker.enter(host, 1)).release();
});

it('slots let go together fill the first push in line up to its lanes, then the next: none left free', async () => {
  const host = newHost();
  const limits = limitsOf(4);
  let askAnswered: () => void = () => undefined;
  const counted: HostLimits = {
    ...limits,
    enter: async (...args) => {
      const entered = await limits.enter(...args);
      askAnswered();
      return entered;
    },
  };
  const gate = createHostGate(counted, { waitingPerHost: 2, pollMs: HOUR_MS });
  const holder = slotsOf(await gate.enter(host, 4));
  const firstAsked = new Promise<void>((resolve) => (askAnswered = resolve));
  const first = gate.enter(host, 3);
  await firstAsked;
  await new Promise((resolve) => setImmediate(resolve));
  const second = gate.enter(host, 2);
  // Four let go at once: three to the first in line (its lanes), one to the next, none back to Redis.
  await holder.release();
  const [firstSlots, secondSlots] = [slotsOf(await first), slotsOf(await second)];
  expect([firstSlots.lanes, secondSlots.lanes]).toEqual([3, 1]);
  const otherWorker = limitsOf(4);
  const meanwhile = await otherWorker.enter(host, 1);
  expect(isHostWait(meanwhile) && meanwhile.reason).toBe('busy');
  await Promise.all([firstSlots.release(), secondSlots.release()]);
  expect(slotsOf(await otherWorker.enter(host, 4)).lanes).toBe(4);
});
