// After a full demo round (connect through the web, sync, serve, rotate feed URLs, refresh OAuth tokens twice
// with rotation, reconnect): no access token, refresh token or authorization code the simulator issued, no
// feed token slotfeed showed, and none of the installation's own secrets appears in any table, any Redis key
// under the prefix, or any log line of the round (captured at debug level, which holds every info line too),
// in plain text or in the encodings secret-forms.ts lists.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runDemoRound, type DemoRound } from './support/demo-round.js';
import { encodedForms, findLeaks, type NamedSecret } from './support/secret-forms.js';
import { dumpDatabase, dumpRedis, type RedisDump } from './support/storage-dump.js';
import { patient } from '../support/patience.js';

let round: DemoRound;
let tables: Map<string, string>;
let redisDump: RedisDump;
let secrets: NamedSecret[];

beforeAll(async () => {
  round = await runDemoRound('sec_secrets');
  tables = await dumpDatabase(round.db.sql);
  redisDump = await dumpRedis(round.redis.connection, round.redis.prefix);
  const ordinal = new Map<string, number>();
  secrets = [
    ...round.issued.map((credential) => {
      const n = (ordinal.get(credential.kind) ?? 0) + 1;
      ordinal.set(credential.kind, n);
      return { name: `${credential.kind} #${n}`, value: credential.value };
    }),
    ...round.feedTokens.map((value, i) => ({ name: `feed token #${i + 1}`, value })),
    ...round.configSecrets,
  ];
}, patient(60_000));
afterAll(async () => {
  await round?.close();
});

const kinds = (kind: string) => round.issued.filter((c) => c.kind === kind);

describe('the round', () => {
  it('did what it claims: connected, synced, served, rotated feed URLs, refreshed tokens twice', () => {
    expect(round.counts.connections).toBe(4);
    // 4 first syncs, 2 × 4 refresh syncs, 1 after the reconnect.
    expect(round.counts.syncRuns).toBeGreaterThanOrEqual(13);
    // Each active feed (4, then 5) fetched and revalidated, before and after the refreshes.
    expect(round.counts.feedFetches).toBe(18);
    // One rotated refresh token per connection per refresh round.
    expect(round.counts.refreshes).toBe(8);
    // 5 codes (4 connects + 1 reconnect); 5 grants' first tokens + 8 refreshed.
    expect(kinds('authorization_code')).toHaveLength(5);
    expect(kinds('refresh_token')).toHaveLength(13);
    expect(kinds('access_token')).toHaveLength(13);
    // 4 callback pages, a rotation and a new feed.
    expect(round.feedTokens).toHaveLength(6);
  });

  it('left something to look through: rows in every table slotfeed writes, BullMQ keys of every kind', () => {
    for (const table of ['connection', 'feed', 'sync_run', 'slot', 'event_type', 'profile', 'overview']) {
      expect(tables.get(`table ${table}`)?.length ?? 0).toBeGreaterThan(0);
    }
    expect(tables.get('table _prisma_migrations')?.length ?? 0).toBeGreaterThan(0);
    // The sealed tokens are there, as envelopes.
    expect(tables.get('table connection')).toMatch(/v1\.[0-9a-f]{12}\./);
    const types = new Set(redisDump.types.values());
    for (const type of ['hash', 'zset', 'string']) expect(types).toContain(type);
    expect([...redisDump.types.keys()].some((key) => key.includes(':sync:'))).toBe(true);
  });

  it('logged at info and at debug level', () => {
    const levels = new Set(round.logLines.map((line) => (JSON.parse(line) as { level: number }).level));
    expect(levels).toContain(30);
    expect(levels).toContain(20);
    expect(round.logLines.join('')).toContain('access token refreshed');
  });
});

describe('the leak check itself', () => {
  it('finds a secret in each of its forms', () => {
    const token = round.feedTokens[0]!;
    for (const { form, text } of encodedForms(token)) {
      const planted = new Map([['planted', `row: {"x": "${text.toUpperCase()}"}`]]);
      const found = findLeaks(new Map([['planted', `prefix ${text} suffix`]]), [{ name: 'f', value: token }]);
      expect(found.map((leak) => leak.form)).toContain(form);
      // Hex forms are found whatever their case.
      if (form.includes('hex'))
        expect(findLeaks(planted, [{ name: 'f', value: token }]).length).toBeGreaterThan(0);
    }
  });
});

describe('at rest', () => {
  it('no table holds an issued token, an authorization code, a feed token or a configured secret', () => {
    expect(findLeaks(tables, secrets)).toEqual([]);
  });

  it('no Redis key under the prefix holds one either (names, strings, hashes, lists, sets, zsets, streams)', () => {
    expect(findLeaks(redisDump.entries, secrets)).toEqual([]);
  });

  it('feed tokens are stored as their SHA-256 and sealed, never in the clear', () => {
    // The feed table's hashes are the tokens' digests and its sealed copies are vault envelopes: the check
    // above would be vacuous if tokens were stored under another column name in the clear; this proves the
    // table holds what it should instead (one of each per feed: the rotated-out token has no row of its own).
    const feedRows = tables.get('table feed') ?? '';
    const feeds = round.feedTokens.length - 1;
    expect(feedRows.match(/\\x[0-9a-f]{64}/g)?.length).toBe(feeds);
    expect(
      feedRows.match(/v1\.[0-9a-f]{12}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43,}/g)?.length,
    ).toBe(feeds);
  });
});

describe('in the logs', () => {
  it('no log line of the round carries any of them', () => {
    const lines = new Map(round.logLines.map((line, i) => [`log line ${i + 1}`, line]));
    expect(findLeaks(lines, secrets)).toEqual([]);
  });

  it('request lines are there, with feed paths and codes redacted', () => {
    const requests = round.logLines.filter((line) => line.includes('"msg":"request"'));
    expect(requests.some((line) => line.includes('/feeds/[redacted].ics'))).toBe(true);
    expect(requests.some((line) => line.includes('/oauth/callback?code=[redacted]'))).toBe(true);
  });
});
