// `slotfeed webhooks test --wait` follows the test's delivery row until the worker has written its first attempt
// there: it stops at that attempt (delivered or not), at a row given up without one, at a row gone with its
// endpoint, and when its time is up with the row still untried (no worker running). Rows and time are the
// test's own: each look at the row is one step of a clock the waiting moves on.
import { describe, expect, it } from '@jest/globals';
import type { WebhookDeliveryRecord } from '../../src/store/webhooks.js';
import { firstAttemptOf } from '../../src/webhooks/first-attempt.js';

const queued: WebhookDeliveryRecord = {
  id: '7d0c0f5e-3c55-4d1c-9c43-0b1e6c2a9f10',
  endpointId: '1f8e2b0a-6a0d-4c8e-9d36-5b7a1c9e2d44',
  eventType: 'webhook.test',
  createdAt: new Date('2026-03-02T09:00:00Z'),
  attempts: 0,
  lastAttemptAt: null,
  lastStatus: null,
  lastLatencyMs: null,
  lastError: null,
  deliveredAt: null,
  givenUpAt: null,
};

/** The rows one look after another returns (the last again once they run out), on a clock moved by sleeping. */
function follow(rows: (WebhookDeliveryRecord | undefined)[], timeoutMs = 10_000) {
  let now = 0;
  let looks = 0;
  const read = async () => rows[Math.min(looks++, rows.length - 1)];
  const result = firstAttemptOf(read, queued.id, {
    timeoutMs,
    pollMs: 200,
    clock: () => now,
    sleep: async (ms) => void (now += ms),
  });
  return result.then((attempt) => ({ attempt, looks, waitedMs: now }));
}

describe('firstAttemptOf', () => {
  it('stops at the first attempt, whatever the receiver answered', async () => {
    const failed = { ...queued, attempts: 1, lastStatus: 500, lastError: 'answered 500' };
    expect(await follow([queued, queued, failed])).toEqual({
      attempt: { kind: 'done', delivery: failed },
      looks: 3,
      waitedMs: 400,
    });
  });

  it('stops at a row given up without an attempt', async () => {
    const givenUp = {
      ...queued,
      givenUpAt: new Date(),
      lastError: 'lost from the queue after its retry window',
    };
    expect((await follow([givenUp])).attempt).toEqual({ kind: 'done', delivery: givenUp });
  });

  it('says so when the row is gone with its endpoint', async () => {
    expect((await follow([queued, undefined])).attempt).toEqual({ kind: 'gone' });
  });

  it('gives up waiting when the time is up, the row still untried', async () => {
    expect(await follow([queued], 1_000)).toEqual({
      attempt: { kind: 'waiting', delivery: queued },
      looks: 6,
      waitedMs: 1_000,
    });
  });
});
