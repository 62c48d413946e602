// The shape every benchmark returns: its inputs (what a figure depends on), its figures, and the checks it
// asserted. run.ts prints them as one table and writes them all to bench-results.json.

export type BenchValue = number | string | boolean | null;

export interface BenchSection {
  /** e.g. "sync round (rate-limited)". */
  benchmark: string;
  inputs: Record<string, BenchValue>;
  figures: Record<string, BenchValue>;
  /** Targets from the issue, with whether this run met them; timing targets are reported, never enforced. */
  targets?: Record<string, { target: string; met: boolean }>;
}

/** Thrown by a benchmark whose correctness check failed (not its timing): the run must not report it. */
export class BenchCheckFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BenchCheckFailed';
  }
}

export function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new BenchCheckFailed(message);
}
