// Polls a condition until it holds or a deadline passes: for outcomes that arrive asynchronously (a worker
// finishing jobs). The deadline is a safety net, not a timing assertion: `timeoutMs` is how long the work takes
// at most on a quiet machine, and the wait allows patient(timeoutMs) (patience.ts), so a loaded machine passes.
import { patient } from './patience.js';

export async function waitFor<T>(
  probe: () => Promise<T>,
  holds: (value: T) => boolean,
  { timeoutMs = 20_000, intervalMs = 100, what = 'condition' } = {},
): Promise<T> {
  const ceilingMs = patient(timeoutMs);
  const deadline = Date.now() + ceilingMs;
  let last = await probe();
  while (!holds(last)) {
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what} (${Math.round(ceilingMs / 1000)} s); last value: ${JSON.stringify(last)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
    last = await probe();
  }
  return last;
}
