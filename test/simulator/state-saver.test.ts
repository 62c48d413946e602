// The state saver: every change is written, a burst of changes costs few writes, and flush() (what close()
// awaits) resolves only once everything changed before it is written. Writes are held open by the test, so no
// test waits on time.
import { describe, expect, it } from '@jest/globals';
import { createStateSaver } from '../../src/simulator/state-saver.js';

/** A write the test finishes by hand; `state` is what the write saw when it started (its snapshot). */
interface HeldWrite {
  state: number;
  finish(): void;
  fail(error: Error): void;
}

function heldWrites(current: () => number) {
  const writes: HeldWrite[] = [];
  const write = () =>
    new Promise<void>((resolve, reject) => {
      writes.push({ state: current(), finish: resolve, fail: reject });
    });
  return { writes, write };
}

/** Lets the saver's promise chain run, without letting any time pass. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('state saver', () => {
  it('writes at the first change, and covers the changes made during a write with one more', async () => {
    let state = 0;
    const { writes, write } = heldWrites(() => state);
    const saver = createStateSaver(write, () => undefined);

    state = 1;
    saver.changed();
    expect(writes.map((w) => w.state)).toEqual([1]);
    for (const next of [2, 3, 4]) {
      state = next;
      saver.changed();
    }
    expect(writes).toHaveLength(1);

    writes[0]!.finish();
    await settle();
    expect(writes.map((w) => w.state)).toEqual([1, 4]);
    writes[1]!.finish();
    await settle();
    expect(writes).toHaveLength(2);
  });

  it('flush resolves only once the write under way and the changes after it are written', async () => {
    let state = 1;
    const { writes, write } = heldWrites(() => state);
    const saver = createStateSaver(write, () => undefined);
    saver.changed();
    state = 2;
    saver.changed();

    let flushed = false;
    const flushing = saver.flush().then(() => (flushed = true));
    writes[0]!.finish();
    await settle();
    expect(flushed).toBe(false);
    expect(writes.map((w) => w.state)).toEqual([1, 2]);
    writes[1]!.finish();
    await flushing;
    expect(flushed).toBe(true);
  });

  it('flush with nothing changed writes nothing', async () => {
    const { writes, write } = heldWrites(() => 0);
    await createStateSaver(write, () => undefined).flush();
    expect(writes).toHaveLength(0);
  });

  it('a failed write is reported and stays pending: flush tries again, and rejects if that fails too', async () => {
    let state = 1;
    const { writes, write } = heldWrites(() => state);
    const reported: unknown[] = [];
    const saver = createStateSaver(write, (error) => reported.push(error));

    saver.changed();
    writes[0]!.fail(new Error('disk full'));
    await settle();
    expect(reported).toEqual([new Error('disk full')]);

    state = 2;
    const flushing = saver.flush();
    await settle();
    expect(writes.map((w) => w.state)).toEqual([1, 2]);
    writes[1]!.fail(new Error('still full'));
    await expect(flushing).rejects.toThrow('still full');

    const retried = saver.flush();
    await settle();
    writes[2]!.finish();
    await expect(retried).resolves.toBeUndefined();
    expect(reported).toHaveLength(1);
  });
});
