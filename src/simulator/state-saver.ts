// Writes the state after every change without a write per change: a change starts a write unless one is under
// way, and changes made during a write are covered by one more write after it. No timers, so a test waits for
// nothing but flush(), and a burst of changes (the demo's history books hundreds) costs a few writes.

export interface StateSaver {
  /** Something worth keeping changed; the write starts at once or after the one under way. */
  changed(): void;
  /** Resolves once every change reported so far is written; rejects if the last try to write it failed. */
  flush(): Promise<void>;
}

export function createStateSaver(
  /** Writes the whole state as it is when called (it must take its snapshot before its first await). */
  write: () => Promise<void>,
  /** A write started by changed() failed; the change stays pending for the next write or flush(). */
  onBackgroundError: (error: unknown) => void,
): StateSaver {
  let pending = false;
  let running: Promise<void> | null = null;

  const run = (): Promise<void> => {
    running = (async () => {
      try {
        while (pending) {
          pending = false;
          try {
            await write();
          } catch (thrown: unknown) {
            pending = true;
            throw thrown;
          }
        }
      } finally {
        // Cleared in the same step the loop saw nothing pending, so no change can slip in between.
        running = null;
      }
    })();
    return running;
  };

  return {
    changed() {
      pending = true;
      if (running === null) run().catch(onBackgroundError);
    },
    async flush() {
      for (;;) {
        // A background failure was reported already; the flush tries again and reports its own outcome.
        if (running !== null) await running.catch(() => undefined);
        else if (pending) await run();
        else return;
      }
    },
  };
}
