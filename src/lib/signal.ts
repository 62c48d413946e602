// A notice without data, from one part of a process to whichever parts listen: "there is something to do".
// Listeners are called synchronously and must not throw.

export interface Signal {
  notify(): void;
  /** Adds a listener; the function returned removes it. */
  on(listener: () => void): () => void;
}

export function createSignal(): Signal {
  const listeners = new Set<() => void>();
  return {
    notify: () => {
      for (const listener of listeners) listener();
    },
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
