// The retry window the lost-job sweep gives up after is derived from the retry policy, not declared beside it:
// whatever WEBHOOK_MAX_ATTEMPTS and WEBHOOK_RETRY_BASE_MS say, it is the sum of the waits BullMQ itself computes
// for the backoff a delivery job is added with.
import { expect, it } from '@jest/globals';
import { Backoffs } from 'bullmq';
import fc from 'fast-check';
import { retryWindowMs, webhookJobOptions } from '../../src/webhooks/webhook-jobs.js';

async function bullmqWaitsMs(retry: { maxAttempts: number; retryBaseMs: number }): Promise<number> {
  const { backoff, attempts = 1 } = webhookJobOptions('delivery', retry);
  const options = Backoffs.normalize(backoff!)!;
  const strategy = Backoffs.builtinStrategies[options.type]!(options.delay ?? 0, options.jitter);
  let total = 0;
  // After the n-th failed attempt BullMQ waits strategy(n) before the next; the last attempt has no next.
  for (let made = 1; made < attempts; made++) total += await strategy(made);
  return total;
}

it('is the sum of the waits BullMQ puts between a delivery’s attempts', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        maxAttempts: fc.integer({ min: 1, max: 30 }),
        retryBaseMs: fc.integer({ min: 1, max: 3_600_000 }),
      }),
      async (retry) => {
        expect(retryWindowMs(retry)).toBe(await bullmqWaitsMs(retry));
      },
    ),
  );
  // The defaults: 15 attempts 5 s × 2ⁿ apart, about 22.8 h.
  expect(retryWindowMs({ maxAttempts: 15, retryBaseMs: 5000 }) / 3_600_000).toBeCloseTo(22.75, 2);
});
