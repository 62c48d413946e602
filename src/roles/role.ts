// A role this process runs (the sync and webhook workers, the scheduler, the web server, the health server): an
// object the composition root starts once and closes once. What start() started, close() releases newest first
// and past a step that fails (lib/releasers.ts), however often it is called: a second SIGTERM, or a start that
// failed half way, which the root closes like any other.
import { coerceError } from '../lib/coerce-error.js';
import { Releasers } from '../lib/releasers.js';

export interface Role {
  readonly name: string;
  start(): Promise<void>;
  /**
   * Safe to call twice, and after a start() that failed. Rejects once every part is released if a part's
   * release failed, with an error naming that part, so the process's shutdown logs and counts it.
   */
  close(): Promise<void>;
}

/** What a role has started, for its close(): `add` each part as it starts. */
export interface StartedParts {
  add(step: string, release: () => Promise<void> | void): void;
  close(): Promise<void>;
}

export function startedParts(): StartedParts {
  const releasers = new Releasers();
  let closing: Promise<void> | undefined;
  return {
    add(step, release) {
      releasers.add(step, async () => {
        try {
          await release();
        } catch (thrown: unknown) {
          throw new Error(`${step}: ${coerceError(thrown).message}`, { cause: thrown });
        }
      });
    },
    close() {
      closing ??= releasers.releaseAll().then((failures) => {
        if (failures.length === 1) throw failures[0];
        if (failures.length > 1)
          throw new AggregateError(failures, failures.map((f) => f.message).join('; '));
      });
      return closing;
    },
  };
}
