// A CalDAV worker's pushes at once (issue 43): the parked pushes it runs itself share its CALDAV_CONCURRENCY with
// its jobs. Before, a worker ran every parked push brought back at once, beside its jobs: a few hosts with deep
// backlogs would have had it run up to twice the host's slots for each of them, whatever CALDAV_CONCURRENCY said.
import { expect, it } from '@jest/globals';
import { createWorkerRoom } from '../../src/destinations/worker-room.js';

/** Work that ends when told. */
function gated() {
  let end!: () => void;
  const ended = new Promise<void>((resolve) => (end = resolve));
  return { end, ended };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

it('pushes brought back while the share is full wait, in the order they came, for a job or push to end', async () => {
  const limits: number[] = [];
  const room = createWorkerRoom(2, (jobs) => limits.push(jobs));
  const started: string[] = [];
  const pushes = new Map<string, ReturnType<typeof gated>>();
  const resume = (key: string) =>
    room.resume(key, async () => {
      started.push(key);
      const push = gated();
      pushes.set(key, push);
      await push.ended;
    });

  const job = gated();
  const running = room.job(() => job.ended);
  resume('a');
  // One job and one push: the share of two is full, so BullMQ may fetch one (its least), and b and c wait.
  expect(started).toEqual(['a']);
  expect(limits.at(-1)).toBe(1);
  resume('b');
  resume('c');
  expect(started).toEqual(['a']);
  expect(room.waiting('b') && room.waiting('c')).toBe(true);

  // Its job came back meanwhile: c waits no longer, and is not started twice.
  room.forget('c');
  job.end();
  await running;
  expect(started).toEqual(['a', 'b']);
  expect(limits.at(-1)).toBe(1);

  pushes.get('a')!.end();
  await settle();
  expect(limits.at(-1)).toBe(1);
  pushes.get('b')!.end();
  await settle();
  // None running: BullMQ may fetch the whole share again.
  expect(limits.at(-1)).toBe(2);
  expect(started).toEqual(['a', 'b']);
});

it('never more at once than the share, jobs and pushes together', async () => {
  const share = 3;
  let atOnce = 0;
  let most = 0;
  let done = 0;
  const room = createWorkerRoom(share, () => undefined);
  const busy = async () => {
    atOnce++;
    most = Math.max(most, atOnce);
    await settle();
    atOnce--;
    done++;
  };
  const jobs: Promise<unknown>[] = [];
  for (let i = 0; i < 20; i++) {
    room.resume(`push-${i}`, busy);
    // A job only ever comes with room for it: BullMQ fetches within the limit the room sets.
    if (atOnce < share) jobs.push(room.job(busy));
  }
  await Promise.all(jobs);
  while (done < 20 + jobs.length) await settle();
  expect(most).toBe(share);
});

it('after close nothing starts, and close waits for the pushes running', async () => {
  const room = createWorkerRoom(1, () => undefined);
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
  const closing = room.close(60_000);
  room.resume('c', async () => {
    laterStarted = true;
  });
  expect(room.waiting('b') || room.waiting('c')).toBe(false);
  push.end();
  await closing;
  expect(ended).toBe(true);
  expect(laterStarted).toBe(false);
});
