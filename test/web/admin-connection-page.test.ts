// The administrator's page for one connection, against a connection synced through the real pipeline.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { FakeClock } from '../support/sync-harness.js';
import { ADMIN_TOKEN, createWebHarness, type WebHarness } from '../support/web-harness.js';
import { RUNS_PER_PAGE } from '../../src/web/admin/admin-connection-page.js';

let h: WebHarness;
let connectionId: string;
let token: string;
const bearer = { authorization: `Bearer ${ADMIN_TOKEN}`, accept: 'text/html' };
const page = () => h.get(`/admin/connections/${connectionId}`, bearer);

beforeAll(async () => {
  h = await createWebHarness('web_admin_connection');
  const connected = await h.connectViaWeb(h.sync.sim.users[0]!.email);
  connectionId = connected.connectionId;
  token = connected.token!;
  await h.syncNow(connectionId);
  (h.sync.clock as FakeClock).advance(3 * 24 * 3600);
  await h.syncNow(connectionId);
  // A failed run, as the worker records one.
  await h.sync.db.prisma.syncRun.create({
    data: {
      connectionId,
      outcome: 'failed',
      startedAt: h.sync.clock.now(),
      finishedAt: h.sync.clock.now(),
      errorCode: 'upstream_unavailable',
      errorMessage: 'Calendbook answered 503 three times',
    },
  });
});
afterAll(async () => {
  await h?.close();
});

describe('GET /admin/connections/:id', () => {
  it('lists the runs newest first, with the failed run’s error', async () => {
    const { text, status } = await page();
    expect(status).toBe(200);
    const runs = await h.sync.db.prisma.syncRun.findMany({
      where: { connectionId },
      orderBy: [{ startedAt: 'desc' }, { id: 'desc' }],
    });
    const listed = [...text.matchAll(/data-run-id="([0-9a-f-]{36})"/g)].map((m) => m[1]);
    expect(listed).toEqual(runs.map((r) => r.id));
    expect(text).toContain('upstream_unavailable');
    expect(text).toContain('Calendbook answered 503 three times');
  });

  it('shows the bands each run pulled, and when each band is next due', async () => {
    const { text } = await page();
    const runs = await h.sync.db.prisma.syncRun.findMany({ where: { connectionId, outcome: 'succeeded' } });
    const bandNames = h.sync.config.sync.bands.map((band) => band.name);
    for (const run of runs) expect(run.bands).toEqual(bandNames); // syncNow pulls every band
    const row = (id: string) => text.slice(text.indexOf(`data-run-id="${id}"`)).split('</li>')[0]!;
    for (const run of runs) expect(row(run.id)).toContain(bandNames.join(', '));
    const connection = await h.sync.db.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } });
    const state = connection.bandState as Record<string, { dueAt: string }>;
    const shown = text.slice(text.indexOf('id="band-times"')).split('</dd>')[0]!;
    for (const band of bandNames) {
      expect(shown).toContain(`<code>${band}</code>`);
      // Its due time, as the page writes times (the connection's zone), sits on the band's line.
      const line = shown.slice(shown.indexOf(`<code>${band}</code>`)).split('</div>')[0]!;
      expect(Date.parse(state[band]!.dueAt)).toBeGreaterThan(h.sync.clock.now().getTime());
      expect(line).toMatch(/next\s+<time datetime="([^"]+)"/);
      expect(new Date(/datetime="([^"]+)"/.exec(line)![1]!).getTime()).toBe(Date.parse(state[band]!.dueAt));
    }
  });

  it('sums the upstream calls per endpoint as the runs recorded them', async () => {
    const { text } = await page();
    const runs = await h.sync.db.prisma.syncRun.findMany({ where: { connectionId } });
    const expected = new Map<string, number>();
    for (const run of runs) {
      for (const [endpoint, calls] of Object.entries(run.callsByEndpoint as Record<string, number>)) {
        expected.set(endpoint, (expected.get(endpoint) ?? 0) + calls);
      }
    }
    expect(expected.size).toBeGreaterThan(0);
    const week = text.slice(text.indexOf('id="calls-week"'));
    for (const [endpoint, calls] of expected) {
      expect(week).toMatch(
        new RegExp(
          `<code>${endpoint.replace(/[{}/]/g, '\\$&')}</code></th>\\s*<td class="num">${calls}</td>`,
        ),
      );
    }
  });

  it('charts the open slots of each day, counted from the slot history, and nothing before the first sync', async () => {
    const { text } = await page();
    const data = JSON.parse(
      /<script type="application\/json" id="chart-data">\s*(.*?)\s*<\/script>/s
        .exec(text)![1]!
        .replace(/\\u003c/g, '<'),
    );
    expect(data.x).toHaveLength(28);
    const slots = await h.sync.db.prisma.slot.findMany({ where: { connectionId } });
    const openAt = (t: Date) =>
      slots.filter((s) => s.firstSeenAt <= t && (s.goneAt === null || s.goneAt > t)).length;
    const { firstSyncedAt } = await h.sync.db.prisma.connection.findUniqueOrThrow({
      where: { id: connectionId },
    });
    // Before the first sync nothing was known: a gap in the line, not a day with nothing open.
    const expected = (data.x as number[]).map((seconds) => {
      const t = new Date(seconds * 1000);
      return firstSyncedAt === null || t < firstSyncedAt ? null : openAt(t);
    });
    expect(data.y).toEqual(expected);
    expect(expected[0]).toBeNull();
    expect(Math.max(...expected.map((open) => open ?? 0))).toBeGreaterThan(0);
  });

  it('lists the feeds without ever showing a token', async () => {
    const { text } = await page();
    const feeds = await h.feeds.list({ connectionId, includeRevoked: true });
    for (const feed of feeds) expect(text).toContain(`data-feed-id="${feed.id}"`);
    expect(text).not.toContain(token);
  });

  it('is a 404 for an unknown or malformed id, and needs an administrator', async () => {
    expect((await h.get(`/admin/connections/${randomUUID()}`, bearer)).status).toBe(404);
    expect((await h.get('/admin/connections/not-an-id', bearer)).status).toBe(404);
    const anonymous = await h.get(`/admin/connections/${connectionId}`, { accept: 'text/html' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.text).not.toContain(h.sync.sim.users[0]!.email);
  });
  it('pages the runs, ten at a time, newest first, with links to older and newer ones', async () => {
    // Enough runs for three pages, each a minute apart, newer than every run so far.
    const base = h.sync.clock.now().getTime();
    await h.sync.db.prisma.syncRun.createMany({
      data: Array.from({ length: 2 * RUNS_PER_PAGE + 3 }, (_, i) => ({
        connectionId,
        outcome: 'succeeded',
        startedAt: new Date(base + (i + 1) * 60_000),
        finishedAt: new Date(base + (i + 1) * 60_000 + 1500),
      })),
    });
    const all = await h.sync.db.prisma.syncRun.findMany({
      where: { connectionId },
      orderBy: [{ startedAt: 'desc' }, { id: 'desc' }],
    });
    const listedOn = async (query: string) => {
      const { text, status } = await h.get(`/admin/connections/${connectionId}${query}`, bearer);
      expect(status).toBe(200);
      return { text, ids: [...text.matchAll(/data-run-id="([0-9a-f-]{36})"/g)].map((m) => m[1]) };
    };
    const first = await listedOn('');
    expect(first.ids).toEqual(all.slice(0, RUNS_PER_PAGE).map((r) => r.id));
    expect(first.text).toContain(`Runs 1–${RUNS_PER_PAGE} of ${all.length}`);
    expect(first.text).toMatch(/runs-page=2#runs" rel="next"\s*>Older</);
    expect(first.text).not.toContain('rel="prev"');
    const second = await listedOn('?runs-page=2');
    expect(second.ids).toEqual(all.slice(RUNS_PER_PAGE, 2 * RUNS_PER_PAGE).map((r) => r.id));
    expect(second.text).toMatch(/rel="prev"\s*>Newer</);
    const last = await listedOn(`?runs-page=${Math.ceil(all.length / RUNS_PER_PAGE)}`);
    expect(last.ids).toEqual(all.slice(2 * RUNS_PER_PAGE).map((r) => r.id));
    expect(last.text).not.toContain('rel="next"');
    // Nonsense asks for the first page.
    expect((await listedOn('?runs-page=nope')).ids).toEqual(first.ids);
  });
});
