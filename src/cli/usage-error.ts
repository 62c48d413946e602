// A command line that cannot be run as given: a value a command refuses, a required option left out, options
// that conflict. Thrown before anything is contacted; runCli prints it as commander prints its own usage errors
// and exits 2 (docs/operating.md, "Commands"). Its message names the option, so the fix is on the line the user typed.
import { InvalidArgumentError } from 'commander';

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** What follows a usage error on stderr, commander's own and ours alike. */
export const USAGE_HINT = '(run with --help for usage)';

/**
 * A commander argument parser from a validator that throws for a value it refuses: the refusal becomes
 * commander's usage error, which names the option or argument and the value given.
 */
export function parsedBy<T>(validate: (value: string) => T): (value: string) => T {
  return (value) => {
    try {
      return validate(value);
    } catch (thrown: unknown) {
      throw new InvalidArgumentError(thrown instanceof Error ? thrown.message : String(thrown));
    }
  };
}
