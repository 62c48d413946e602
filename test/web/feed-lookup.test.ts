// The web role answers polls of an unchanged feed from memory (the token lookup and the rendered bytes), so
// what matters is that it forgets in time: a change by any writer (the worker, the CLI, an operator's SQL on
// another connection) shows in the next poll, also when the change races a lookup in flight, and nothing is
// remembered while the change notices cannot be heard.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { pgSessionsFor } from '../../src/composition/clients.js';
import { startFeedChangeListener, type FeedChangeListener } from '../../src/store/feed-change-listener.js';
import type { ResolvedFeed } from '../../src/store/feeds.js';
import { createFeedLookup } from '../../src/serving/feed-lookup.js';
import { startFreezableProxy } from '../support/freezable-proxy.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { waitFor } from '../support/wait-for.js';

/** The name a resolved connection feed's bytes would show. */
const displayNameOf = (resolved: ResolvedFeed | undefined) =>
  resolved?.kind === 'connection' ? resolved.connection.displayName : undefined;

let h: WebHarness;
let connectionId: string;

const calendarName = (ics: string) => /^X-WR-CALNAME:(.*)$/m.exec(ics)?.[1]?.trim();

/** A statement on a connection of its own, as another process would run it. */
const otherWriter = (sql: string, values: unknown[] = []) => h.sync.db.sql.query(sql, values);

const rename = (name: string) =>
  otherWriter(`UPDATE connection SET display_name = $2 WHERE id = $1`, [connectionId, name]);

async function rememberedLookups(): Promise<number> {
  const metric = await h.metrics.registry.getSingleMetric('slotfeed_feed_lookups_total')!.get();
  return metric.values.find((v) => v.labels.result === 'remembered')?.value ?? 0;
}

beforeAll(async () => {
  h = await createWebHarness('web_feed_lookup');
  const connected = await h.connectViaWeb(h.sync.sim.users[0]!.email);
  connectionId = connected.connectionId;
  await h.syncNow(connectionId);
});
afterAll(async () => {
  await h?.close();
});

async function newFeed(): Promise<{ path: string; token: string }> {
  const { token } = await h.feeds.create({ connectionId });
  return { path: `/feeds/${token}.ics`, token };
}

/** A path polled twice, the second time answered from memory. */
async function rememberedFeed(): Promise<string> {
  const { path } = await newFeed();
  expect((await h.get(path)).status).toBe(200);
  const before = await rememberedLookups();
  expect((await h.get(path)).status).toBe(200);
  expect(await rememberedLookups()).toBe(before + 1);
  return path;
}

describe('a change by another writer shows in the next poll of a remembered feed', () => {
  it('a revoked feed answers 404', async () => {
    const path = await rememberedFeed();
    await otherWriter(`UPDATE feed SET revoked_at = now() WHERE connection_id = $1 AND revoked_at IS NULL`, [
      connectionId,
    ]);
    expect((await h.get(path)).status).toBe(404);
  });

  it('a renamed account shows in the calendar name', async () => {
    const path = await rememberedFeed();
    const before = await h.get(path);
    await rename('Renamed Person');
    const after = await h.get(path);
    expect(calendarName(before.text)).not.toContain('Renamed Person');
    expect(calendarName(after.text)).toContain('Renamed Person');
    expect(after.headers.etag).not.toBe(before.headers.etag);
  });

  it('a feed moved to another connection is no longer served as the old one', async () => {
    const path = await rememberedFeed();
    const other = await h.sync.clients.prisma.connection.create({
      data: { upstreamUserId: 'usr_moved_to', email: 'moved@example.test', timezone: 'UTC' },
    });
    await otherWriter(`UPDATE feed SET connection_id = $2 WHERE connection_id = $1`, [
      connectionId,
      other.id,
    ]);
    // The other connection never synced: its feed is an empty calendar named after its e-mail.
    expect(calendarName((await h.get(path)).text)).toContain('moved@example.test');
  });
});

describe('a listener of its own', () => {
  let listener: FeedChangeListener | undefined;
  afterEach(async () => {
    await listener?.close();
  });

  /** A lookup on `listener` that counts its loads. */
  function countingLookup(changes: FeedChangeListener) {
    const counter = { loads: 0 };
    const lookup = createFeedLookup({
      load: (hash) => {
        counter.loads += 1;
        return h.feeds.resolveTokenHash(hash);
      },
      changes,
    });
    return { lookup, counter };
  }

  const terminateListeners = () =>
    otherWriter(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE application_name = 'slotfeed-listen' AND datname = current_database()`,
    );

  it('loads an unchanged feed once, and again after a change', async () => {
    listener = await startFeedChangeListener({ sessions: h.sync.clients.pgSessions, logger: h.deps.logger });
    const { lookup, counter } = countingLookup(listener);
    const { token } = await newFeed();
    await lookup.resolve(token);
    await lookup.resolve(token);
    expect(counter.loads).toBe(1);
    await otherWriter(`UPDATE feed SET label = 'relabelled' WHERE connection_id = $1`, [connectionId]);
    await listener.caughtUp();
    await lookup.resolve(token);
    expect(counter.loads).toBe(2);
  });

  it('remembers nothing while its connection is down, then reconnects and hears again', async () => {
    listener = await startFeedChangeListener({
      sessions: h.sync.clients.pgSessions,
      logger: h.deps.logger,
      reconnectMinMs: 3_000,
    });
    const { lookup, counter } = countingLookup(listener);
    const { token } = await newFeed();
    await lookup.resolve(token);

    await terminateListeners();
    const current = listener;
    await waitFor(
      async () => current.isLive(),
      (live) => !live,
      { what: 'the listener to notice' },
    );
    await rename('While Down');
    expect(displayNameOf(await lookup.resolve(token))).toBe('While Down');
    await lookup.resolve(token);
    expect(counter.loads).toBe(3);
    expect(listener.isLive()).toBe(false); // still down: what was measured is the outage

    await waitFor(
      async () => current.isLive(),
      (live) => live,
      { what: 'the listener to reconnect' },
    );
    await lookup.resolve(token);
    await lookup.resolve(token);
    expect(counter.loads).toBe(4);
    await rename('After Reconnect');
    await listener.caughtUp();
    expect(displayNameOf(await lookup.resolve(token))).toBe('After Reconnect');
  });

  it('treats a connection that silently stops delivering as lost, and reconnects', async () => {
    const url = new URL(h.sync.db.url);
    const proxy = await startFreezableProxy({ host: url.hostname, port: Number(url.port || 5432) });
    try {
      url.host = `127.0.0.1:${proxy.port}`;
      listener = await startFeedChangeListener({
        sessions: pgSessionsFor(url.toString()),
        logger: h.deps.logger,
        heartbeatMs: 200,
        heardWithinMs: 500,
        reconnectMinMs: 100,
      });
      const current = listener;
      const { lookup, counter } = countingLookup(current);
      const { token } = await newFeed();
      await lookup.resolve(token);
      await lookup.resolve(token);
      expect(counter.loads).toBe(1);

      proxy.freezeExisting();
      await waitFor(
        async () => current.isLive(),
        (live) => !live,
        { what: 'an unheard heartbeat' },
      );
      await rename('Unheard');
      expect(displayNameOf(await lookup.resolve(token))).toBe('Unheard');

      await waitFor(
        async () => current.isLive(),
        (live) => live,
        { what: 'the listener to reconnect' },
      );
      await lookup.resolve(token);
      await rename('Heard Again');
      await current.caughtUp();
      expect(displayNameOf(await lookup.resolve(token))).toBe('Heard Again');
    } finally {
      await listener?.close();
      listener = undefined;
      await proxy.close();
    }
  });

  it('forgets everything on a TRUNCATE', async () => {
    listener = await startFeedChangeListener({ sessions: h.sync.clients.pgSessions, logger: h.deps.logger });
    const { lookup, counter } = countingLookup(listener);
    const { token } = await newFeed();
    await lookup.resolve(token);
    await otherWriter(`CREATE TABLE IF NOT EXISTS truncate_probe (LIKE feed)`);
    // A TRUNCATE of the real table would end the other tests; the trigger is what is under test, so it is
    // attached to a scratch table of the same shape.
    await otherWriter(
      `CREATE OR REPLACE TRIGGER probe_truncate AFTER TRUNCATE ON truncate_probe
       FOR EACH STATEMENT EXECUTE FUNCTION slotfeed_notify_feed_change()`,
    );
    await otherWriter(`TRUNCATE truncate_probe`);
    await listener.caughtUp();
    expect(await lookup.resolve(token)).toBeDefined();
    expect(counter.loads).toBe(2);
  });

  it('does not remember an answer read before a change it raced', async () => {
    listener = await startFeedChangeListener({ sessions: h.sync.clients.pgSessions, logger: h.deps.logger });
    const changes = listener;
    const { token } = await newFeed();
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
      changes,
    });
    const racing = lookup.resolve(token);
    await waitFor(
      async () => firstReadDone,
      (done) => done,
    );
    await rename('Raced');
    await changes.caughtUp();
    releaseFirstLoad();
    expect(displayNameOf(await racing)).not.toBe('Raced');
    expect(displayNameOf(await lookup.resolve(token))).toBe('Raced');
    expect(loads).toBe(2);
  });

  it('does not remember unknown tokens', async () => {
    listener = await startFeedChangeListener({ sessions: h.sync.clients.pgSessions, logger: h.deps.logger });
    const { lookup, counter } = countingLookup(listener);
    expect(await lookup.resolve('not-a-feed-token')).toBeUndefined();
    expect(await lookup.resolve('not-a-feed-token')).toBeUndefined();
    expect(counter.loads).toBe(2);
  });
});
