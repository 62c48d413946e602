// Polls a condition until it holds or a deadline passes: for outcomes that arrive asynchronously (a worker
// finishing jobs). The deadline is a safety net, not a timing assertion.
export async function waitFor<T>(
  probe: () => Promise<T>,
  holds: (value: T) => boolean,
  { timeoutMs = 20_000, intervalMs = 100, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = await probe();
  while (!holds(last)) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
    last = await probe();
  }
  return last;
}
