// A CalDAV worker's pushes at once (issue 43): the parked pushes it runs itself take room beside its jobs, in the
// order they came, so that the two together never do more than the worker's share of CALDAV_CONCURRENCY at once.
// A parked push run beside the jobs with no room of its own would let a few hosts with deep backlogs have the
// worker run up to twice the host's slots for each of them, whatever CALDAV_CONCURRENCY said.
import { expect, it } from '@jest/globals';
import { createWorkerRoom } from '../../src/destinations/worker-room.js';

/** Work that ends when told. */
function gated() {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  return { end, ended };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

it('jobs and parked pushes take room in the order they came, and wait for it when the share is full', async () => {
  const room = createWorkerRoom(2);
  const started: string[] = [];
  const ends = new Map<string, () => void>();
  const work = (name: string) => async () => {
    started.push(name);
    const { end, ended } = gated();
    ends.set(name, end);
    await ended;
  };

  const firstJob = room.job(work('job 1'));
  await settle();
  room.resume('a', work('push a'));
  await settle();
  expect(started).toEqual(['job 1', 'push a']);
  // The share is full: a job BullMQ fetched now waits, and so do pushes brought back after it, in turn.
  const secondJob = room.job(work('job 2'));
  room.resume('b', work('push b'));
  room.resume('c', work('push c'));
  await settle();
  expect(started).toEqual(['job 1', 'push a']);
  expect(room.holds('b') && room.holds('c')).toBe(true);
  // Its job came back meanwhile: c waits no longer, and is not started twice.
  room.forget('c');
  expect(room.holds('c')).toBe(false);

  ends.get('push a')!();
  await settle();
  expect(started).toEqual(['job 1', 'push a', 'job 2']);
  // A push running is still held here: the dispatcher does not queue it again meanwhile.
  ends.get('job 1')!();
  await firstJob;
  await settle();
  expect(started).toEqual(['job 1', 'push a', 'job 2', 'push b']);
  expect(room.holds('b')).toBe(true);
  ends.get('push b')!();
  ends.get('job 2')!();
  await secondJob;
  await settle();
  expect(room.holds('b')).toBe(false);
  expect(started).toEqual(['job 1', 'push a', 'job 2', 'push b']);
});

it('never more at once than the share, jobs and pushes together', async () => {
  const share = 3;
  let atOnce = 0;
  let most = 0;
  let done = 0;
  const room = createWorkerRoom(share);
  const busy = async () => {
    atOnce++;
    most = Math.max(most, atOnce);
    await settle();
    atOnce--;
    done++;
  };
  // BullMQ fetches up to the share of jobs whatever the parked pushes hold.
  const jobs = Array.from({ length: share }, () => room.job(busy));
  for (let i = 0; i < 20; i++) room.resume(`push-${i}`, busy);
  jobs.push(...Array.from({ length: share }, () => room.job(busy)));
  await Promise.all(jobs);
  while (done < 20 + jobs.length) await settle();
  expect(most).toBe(share);
});

it('after close nothing starts: jobs waiting end as closing, and close waits for the pushes running', async () => {
  const room = createWorkerRoom(1);
  const push = gated();
  let ended = false;
  room.resume('a', async () => {
    await push.ended;
    ended = true;
  });
  let laterStarted = false;
  room.resume('b', async () => {
    laterStarted = true;
  });
  const waitingJob = room.job(async () => {
    laterStarted = true;
  });
  const closing = room.close(60_000);
  room.resume('c', async () => {
    laterStarted = true;
  });
  expect(await waitingJob).toBe('closing');
  expect(await room.job(async () => 'ran')).toBe('closing');
  expect(room.holds('b') || room.holds('c')).toBe(false);
  push.end();
  await closing;
  expect(ended).toBe(true);
  expect(laterStarted).toBe(false);
});
