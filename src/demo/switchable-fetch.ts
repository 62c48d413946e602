// What the demo's syncs send upstream with, switched while it runs: the simulator in this process while the
// history is recorded (its dozens of sync rounds need no sockets: simulator/in-process-fetch.ts), then HTTP
// over loopback, as any daemon reaches its upstream.
export interface SwitchableFetch {
  /** Sends with whichever fetch was last chosen. */
  fetch: typeof fetch;
  use(next: typeof fetch): void;
}

export function switchableFetch(initial: typeof fetch): SwitchableFetch {
  let current = initial;
  return {
    fetch: (input, init) => current(input, init),
    use(next) {
      current = next;
    },
  };
}
