// Orderly shutdown: resources register how to release themselves as they are created, and `releaseAll`
// releases them newest-first (a worker stops before the Redis it uses closes), keeps going past a step that
// fails, and is safe to call twice (a second SIGTERM, or a signal racing a fatal error).
import { coerceError } from './coerce-error.js';

export interface Releaser {
  name: string;
  release(): Promise<void> | void;
}

export interface ReleaseLog {
  error(obj: object, msg: string): void;
}

export class Releasers {
  private readonly stack: Releaser[] = [];
  private releasing: Promise<Error[]> | undefined;

  add(name: string, release: () => Promise<void> | void): void {
    if (this.releasing) throw new Error(`cannot register ${name}: shutdown has begun`);
    this.stack.push({ name, release });
  }

  /** Resolves with the errors of the steps that failed (already logged); never rejects. */
  releaseAll(log?: ReleaseLog): Promise<Error[]> {
    this.releasing ??= this.releaseNewestFirst(log);
    return this.releasing;
  }

  private async releaseNewestFirst(log?: ReleaseLog): Promise<Error[]> {
    const failures: Error[] = [];
    for (const releaser of this.stack.reverse()) {
      try {
        await releaser.release();
      } catch (thrown: unknown) {
        const error = coerceError(thrown);
        failures.push(error);
        log?.error({ err: error, step: releaser.name }, 'shutdown step failed; continuing');
      }
    }
    return failures;
  }
}
