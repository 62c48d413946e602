// The web role answers polls of an unchanged feed from memory (the token lookup and the rendered bytes), so
// what matters is that it forgets in time: a change by any writer (the worker, the CLI, an operator's SQL on
// another connection) shows in the next poll, also when the change races a lookup in flight, and nothing is
// remembered while the change notices cannot be heard.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createFeedLookup } from '../../src/web/feed-lookup.js';
import type { ResolvedFeed } from '../../src/store/feeds.js';
import { rawRequest, createWebHarness, type WebHarness } from '../support/web-harness.js';
import { waitFor } from '../support/wait-for.js';

let h: WebHarness;
let connectionId: string;

const calendarName = (ics: string) => /^X-WR-CALNAME:(.*)$/m.exec(ics)?.[1]?.trim();

/** A statement on a connection of its own, as another process would run it. */
const otherWriter = (sql: string, values: unknown[]) => h.sync.db.sql.query(sql, values);

beforeAll(async () => {
  h = await createWebHarness('web_feed_lookup');
  const connected = await h.connectViaWeb(h.sync.sim.users[0]!.email);
  connectionId = connected.connectionId;
  await h.syncNow(connectionId);
});
afterAll(async () => {
  await h?.close();
});

async function newFeed(): Promise<string> {
  const { token } = await h.feeds.create({ connectionId });
  return `/feeds/${token}.ics`;
}

describe('changes by another writer', () => {
  it('a revoked feed answers 404 on the next poll', async () => {
    const path = await newFeed();
    expect((await h.get(path)).status).toBe(200);
    expect((await h.get(path)).status).toBe(200); // now remembered
    await otherWriter(`UPDATE feed SET revoked_at = now() WHERE connection_id = $1 AND revoked_at IS NULL`, [
      connectionId,
    ]);
    expect((await h.get(path)).status).toBe(404);
  });

  it('a renamed account shows in the calendar name of the next poll', async () => {
    const path = await newFeed();
    const before = await h.get(path);
    await otherWriter(`UPDATE connection SET display_name = $2 WHERE id = $1`, [
      connectionId,
      'Renamed Person',
    ]);
    const after = await h.get(path);
    expect(calendarName(after.text)).toContain('Renamed Person');
    expect(calendarName(before.text)).not.toContain('Renamed Person');
    expect(after.headers.etag).not.toBe(before.headers.etag);
  });
});

describe('while the listener is disconnected', () => {
  it('serves changes at once, and reconnects', async () => {
    const path = await newFeed();
    await h.get(path);
    await h.get(path);
    await otherWriter(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE application_name = 'slotfeed-listen' AND datname = current_database()`,
      [],
    );
    await waitFor(
      async () => h.deps.feedChanges.isLive(),
      (live) => !live,
      { what: 'the listener to notice' },
    );
    await otherWriter(`UPDATE connection SET display_name = $2 WHERE id = $1`, [connectionId, 'While Down']);
    // Straight to the socket: nothing to catch up on while nothing is remembered.
    const duringOutage = await rawRequest('GET', `${h.url}${path}`);
    expect(calendarName(duringOutage.text)).toContain('While Down');

    await waitFor(
      async () => h.deps.feedChanges.isLive(),
      (live) => live,
      { what: 'the listener to reconnect' },
    );
    await h.get(path);
    await otherWriter(`UPDATE connection SET display_name = $2 WHERE id = $1`, [
      connectionId,
      'After Reconnect',
    ]);
    expect(calendarName((await h.get(path)).text)).toContain('After Reconnect');
  });
});

describe('the lookup cache', () => {
  it('loads an unchanged feed once, and again after a change', async () => {
    const path = await newFeed();
    const token = path.slice('/feeds/'.length, -'.ics'.length);
    let loads = 0;
    const lookup = createFeedLookup({
      load: (hash) => {
        loads += 1;
        return h.feeds.resolveTokenHash(hash);
      },
      changes: h.deps.feedChanges,
    });
    await lookup.resolve(token);
    await lookup.resolve(token);
    expect(loads).toBe(1);
    await otherWriter(`UPDATE feed SET label = 'relabelled' WHERE connection_id = $1`, [connectionId]);
    await h.deps.feedChanges.caughtUp();
    await lookup.resolve(token);
    expect(loads).toBe(2);
  });

  it('does not remember an answer read before a change it raced', async () => {
    const path = await newFeed();
    const token = path.slice('/feeds/'.length, -'.ics'.length);
    let loads = 0;
    let firstReadDone = false;
    let releaseFirstLoad: () => void = () => undefined;
    const firstLoadHeld = new Promise<void>((resolve) => (releaseFirstLoad = resolve));
    const lookup = createFeedLookup({
      async load(hash): Promise<ResolvedFeed | undefined> {
        loads += 1;
        const resolved = await h.feeds.resolveTokenHash(hash);
        if (loads === 1) {
          firstReadDone = true;
          await firstLoadHeld; // the read is done; the change lands before it is stored
        }
        return resolved;
      },
      changes: h.deps.feedChanges,
    });
    const racing = lookup.resolve(token);
    await waitFor(
      async () => firstReadDone,
      (done) => done,
    );
    await otherWriter(`UPDATE connection SET display_name = $2 WHERE id = $1`, [connectionId, 'Raced']);
    await h.deps.feedChanges.caughtUp();
    releaseFirstLoad();
    expect((await racing)?.connection.displayName).not.toBe('Raced');
    expect((await lookup.resolve(token))?.connection.displayName).toBe('Raced');
    expect(loads).toBe(2);
  });

  it('does not remember unknown tokens', async () => {
    let loads = 0;
    const lookup = createFeedLookup({
      load: (hash) => {
        loads += 1;
        return h.feeds.resolveTokenHash(hash);
      },
      changes: h.deps.feedChanges,
    });
    expect(await lookup.resolve('not-a-feed-token')).toBeUndefined();
    expect(await lookup.resolve('not-a-feed-token')).toBeUndefined();
    expect(loads).toBe(2);
  });
});
