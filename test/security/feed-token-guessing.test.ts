// Guessing feed URLs: 10,000 random tokens (mostly well-formed, some of other lengths and alphabets) all answer
// the same 404. The timing side is in feed-token-timing.test.ts.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { NO_SUCH_FEED } from '../../src/web/http-error.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { randomToken, timedGet } from './support/feed-probes.js';
import { patient } from '../support/patience.js';

let h: WebHarness;
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

beforeAll(async () => {
  // The per-address feed limit (rate-limits.ts) would answer 429 after 600 requests a minute, before the
  // token lookup this file is about; it has tests of its own (test/security/abuse-limits.test.ts).
  h = await createWebHarness('sec_guessing', { webEnv: { FEED_RATE_LIMIT_PER_MINUTE: '0' } });
  // A live feed, so the table the guesses are looked up in is not empty.
  const { connectionId } = await h.connectViaWeb(h.sync.sim.users[0]!.email);
  await h.syncNow(connectionId);
});
afterAll(async () => {
  agent.destroy();
  await h?.close();
});

describe('random feed tokens', () => {
  it(
    '10,000 of them all answer 404 with the one body that never depends on the token',
    async () => {
      const guesses = Array.from({ length: 10_000 }, (_, i) =>
        // Mostly well-formed guesses; every tenth one of another length or alphabet.
        i % 10 === 0 ? encodeURIComponent(randomBytes(1 + (i % 200)).toString('base64')) : randomToken(),
      );
      const bodies = new Set<string>();
      const statuses = new Map<number, number>();
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < guesses.length) {
            const guess = guesses[next++]!;
            let answer = await timedGet(agent, `${h.url}/feeds/${guess}.ics`);
            // A database too busy to answer in time (a loaded machine: 4 of 10,000 in a CI run) is a 503 whose
            // body does not depend on the token either; the guess is asked again, as a client does after its
            // Retry-After, and must then answer like the others.
            for (let retries = 1; answer.status === 503 && retries <= 5; retries++) {
              await new Promise((resolve) => setTimeout(resolve, 100 * retries));
              answer = await timedGet(agent, `${h.url}/feeds/${guess}.ics`);
            }
            statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
            bodies.add(answer.body);
          }
        }),
      );
      expect([...statuses]).toEqual([[404, 10_000]]);
      expect([...bodies]).toEqual([JSON.stringify({ error: 'not_found', message: NO_SUCH_FEED })]);
    },
    patient(120_000),
  );
});
