// Guessing feed URLs by timing: a near miss (a real token with one
// character changed, or a rotated-out token) takes no measurably different time than a random guess. Timing
// is compared as distributions of many interleaved requests on one keep-alive connection: the probability
// that a near-miss request is slower than a random one (0.5 when there is no systematic gap), with a
// positive control showing the same measurement does see a real gap (a 404 that skips the token lookup).
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { median, nearMiss, probabilityOfSuperiority, randomToken, timedGet } from './support/feed-probes.js';
import { patient } from '../support/patience.js';

let h: WebHarness;
let liveTokens: string[];
let rotatedOut: string;
// One socket: every request takes the same network path.
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

beforeAll(async () => {
  // The per-address feed limit (rate-limits.ts) would answer 429 after 600 requests a minute, before the
  // token lookup this file is about; it has tests of its own (test/security/abuse-limits.test.ts).
  h = await createWebHarness('sec_timing', { webEnv: { FEED_RATE_LIMIT_PER_MINUTE: '0' } });
  liveTokens = [];
  for (const user of h.sync.sim.users.slice(0, 2)) {
    const { token, connectionId } = await h.connectViaWeb(user.email);
    await h.syncNow(connectionId);
    liveTokens.push(token!);
  }
  // A third feed whose URL is rotated: its old token is the nearest miss there is.
  const { token: old, connectionId } = await h.connectViaWeb(h.sync.sim.users[2]!.email);
  const [feed] = await h.feeds.list({ connectionId });
  await h.feeds.rotate(feed!.id);
  rotatedOut = old!;
});
afterAll(async () => {
  agent.destroy();
  await h?.close();
});

describe('timing', () => {
  const ROUNDS = 600;

  it(
    'a near miss takes as long as a random guess; the measurement does see a skipped lookup',
    async () => {
      // Warm up every path first (JIT, the connection pool, the prepared query).
      for (let i = 0; i < 100; i++) {
        await timedGet(agent, `${h.url}/feeds/${randomToken()}.ics`);
        await timedGet(agent, `${h.url}/feeds/${nearMiss(liveTokens[i % 2]!)}.ics`);
        await timedGet(agent, `${h.url}/nothing/${randomToken()}.ics`);
      }
      const random: number[] = [];
      const near: number[] = [];
      const noLookup: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const candidates = [
          { into: random, path: `/feeds/${randomToken()}.ics` },
          { into: near, path: `/feeds/${i % 10 === 0 ? rotatedOut : nearMiss(liveTokens[i % 2]!)}.ics` },
          { into: noLookup, path: `/nothing/${randomToken()}.ics` },
        ];
        // A fresh order every round, so drift in machine load hits every kind alike.
        candidates.sort(() => (randomBytes(1)[0]! & 1 ? 1 : -1));
        for (const { into, path } of candidates) {
          const answer = await timedGet(agent, `${h.url}${path}`);
          expect(answer.status).toBe(404);
          into.push(answer.ms);
        }
      }
      const nearVsRandom = probabilityOfSuperiority(near, random);
      const lookupVsNone = probabilityOfSuperiority(random, noLookup);
      const report = `near-miss median ${median(near).toFixed(3)} ms, random ${median(random).toFixed(3)} ms, no lookup ${median(noLookup).toFixed(3)} ms; P(near > random) = ${nearVsRandom.toFixed(3)}, P(lookup > none) = ${lookupVsNone.toFixed(3)}`;
      // No systematic gap: a real one (an early exit for a near miss, a comparison that stops at the first
      // differing byte amplified by a lookup) would push this far from 0.5; noise keeps it within a few hundredths.
      expect({ report, ok: Math.abs(nearVsRandom - 0.5) < 0.08 }).toEqual({ report, ok: true });
      // The control: skipping the database lookup is plainly visible to the same measurement.
      expect({ report, ok: lookupVsNone > 0.75 }).toEqual({ report, ok: true });
    },
    patient(60_000),
  );
});
