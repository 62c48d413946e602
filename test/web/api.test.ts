// The JSON API over real sockets against the simulator: its OpenAPI document validates (with a validator
// slotfeed did not write), every documented route is called and its answer checked against the document, the
// data agrees with the feeds, and credentials reach exactly their scope. Errors are RFC 9457 problem details.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsPlugin, { type FormatsPlugin } from 'ajv-formats';
import { createApiKeyStore, type ApiKeyStore } from '../../src/store/api-keys.js';
import { createTeamStore } from '../../src/store/teams.js';
import { buildWebApp } from '../../src/web/app.js';
import { eventsOf } from '../feeds/feed-fixtures.js';
import type { FakeClock } from '../support/sync-harness.js';
import { createWebHarness, type RawResponse, type WebHarness } from '../support/web-harness.js';

interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { name: string; in: string; required?: boolean }[];
        responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
      }
    >
  >;
  components: { schemas: Record<string, unknown> };
}

let h: WebHarness;
let keys: ApiKeyStore;
let document: OpenApiDocument;
/** Two connected accounts (0 and 2: their working hours overlap), a team of both with a feed, and a key for all. */
let ada: { connectionId: string; token: string };
let other: { connectionId: string; token: string };
let teamId: string;
let teamFeedToken: string;
let key: string;

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
const json = (response: RawResponse) => JSON.parse(response.text) as Record<string, unknown>;

beforeAll(async () => {
  h = await createWebHarness('web_api', { simulator: { users: 3 } });
  keys = createApiKeyStore(h.sync.db.prisma);
  const connect = async (i: number) => {
    const connected = await h.connectViaWeb(h.sync.sim.users[i]!.email);
    await h.syncNow(connected.connectionId);
    return { connectionId: connected.connectionId, token: connected.token! };
  };
  ada = await connect(0);
  other = await connect(2);
  const teams = createTeamStore(h.sync.db.prisma);
  const team = await teams.create('Support');
  await teams.addMembers(team.id, [ada.connectionId, other.connectionId]);
  teamId = team.id;
  teamFeedToken = (await h.feeds.createTeamFeed({ teamId, options: { mode: 'any' } })).token;
  key = (
    await keys.create({
      label: 'dashboard',
      connectionIds: [ada.connectionId, other.connectionId],
      teamIds: [teamId],
    })
  ).secret;
  document = JSON.parse((await h.get('/api/openapi.json')).text) as OpenApiDocument;
});
afterAll(async () => {
  await h?.close();
});

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document, by @readme/openapi-parser', async () => {
    const result = await validate(structuredClone(document) as never);
    expect('errors' in result ? result.errors : []).toEqual([]);
    expect(result.valid).toBe(true);
    expect((document as unknown as { openapi: string }).openapi).toBe('3.1.0');
  });

  it('documents exactly the /api/v1 routes, and no page or feed', () => {
    expect(Object.keys(document.paths).sort()).toEqual([
      '/api/v1/connections/{connectionId}/availability',
      '/api/v1/connections/{connectionId}/event-types',
      '/api/v1/feeds/{feedId}/share-links',
      '/api/v1/feeds/{feedId}/share-links/{shareLinkId}',
      '/api/v1/teams/{teamId}/availability',
    ]);
  });

  it('every documented route answers what the document says it answers', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    // ajv-formats is CommonJS with a `default` beside itself; either is the plugin.
    const plugin = addFormatsPlugin as unknown as FormatsPlugin & { default?: FormatsPlugin };
    const addFormats = plugin.default ?? plugin;
    addFormats(ajv);
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      ajv.addSchema(schema as object, `#/components/schemas/${name}`);
    }
    const adaFeed = (await h.feeds.findByToken(ada.token))!.id;
    const revocable = await h.deps.shareLinks.create({
      feedId: adaFeed,
      label: 'to revoke',
      expiresAt: null,
      now: h.sync.clock.now(),
    });
    const ids: Record<string, string> = {
      connectionId: ada.connectionId,
      teamId,
      feedId: adaFeed,
      shareLinkId: revocable.link.id,
    };
    // A share link is made with a body; its answer is 201.
    const bodyOf = (method: string) =>
      method === 'post'
        ? {
            body: JSON.stringify({ label: 'from the API test', expires: '7d' }),
            headers: { ...bearer(key), 'content-type': 'application/json' },
          }
        : { headers: bearer(key) };
    let called = 0;
    for (const [template, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const path = template.replace(/\{(\w+)\}/g, (_, name: string) => ids[name]!);
        const response = await h.request(method.toUpperCase(), path, bodyOf(method));
        const status = method === 'post' ? 201 : 200;
        expect([template, method, response.status]).toEqual([template, method, status]);
        const declared = operation.responses[String(status)]!.content!['application/json']!.schema as object;
        const check = ajv.compile(
          JSON.parse(
            JSON.stringify(declared).replaceAll(
              '"$ref":"#/components/schemas/',
              '"$ref":"#/components/schemas/',
            ),
          ),
        );
        const body: unknown = JSON.parse(response.text);
        expect([template, check(body) ? [] : check.errors]).toEqual([template, []]);
        // And a problem answer, as documented for 404.
        const missing = await h.request(
          method.toUpperCase(),
          template.replace(/\{(\w+)\}/g, '00000000-0000-4000-8000-000000000000'),
          bodyOf(method),
        );
        expect(missing.status).toBe(404);
        expect(missing.headers['content-type']).toBe('application/problem+json; charset=utf-8');
        // Declared with the media type it is sent with.
        expect(Object.keys(operation.responses['404']!.content!)).toEqual(['application/problem+json']);
        const problem = ajv.compile(
          operation.responses['404']!.content!['application/problem+json']!.schema as object,
        );
        expect(problem(JSON.parse(missing.text))).toBe(true);
        called += 1;
      }
    }
    expect(called).toBe(6);
  });

  it('every documented GET answers with a strong ETag and Last-Modified, and 304 to If-None-Match', async () => {
    const adaFeed = (await h.feeds.findByToken(ada.token))!.id;
    await h.deps.shareLinks.create({
      feedId: adaFeed,
      label: 'listed',
      expiresAt: null,
      now: h.sync.clock.now(),
    });
    const ids: Record<string, string> = { connectionId: ada.connectionId, teamId, feedId: adaFeed };
    const gets = Object.entries(document.paths).flatMap(([template, operations]) =>
      operations.get === undefined ? [] : [{ template, operation: operations.get }],
    );
    expect(gets.length).toBeGreaterThanOrEqual(4);
    for (const { template, operation } of gets) {
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => ids[name]!);
      const first = await h.get(path, bearer(key));
      const { etag, 'last-modified': lastModified } = first.headers;
      expect({ template, status: first.status, etag, lastModified }).toEqual({
        template,
        status: 200,
        // Strong: no W/ before the quotes.
        etag: expect.stringMatching(/^"[^"]+"$/),
        lastModified: expect.stringMatching(/^\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT$/),
      });
      const again = await h.get(path, { ...bearer(key), 'if-none-match': etag! });
      expect({ template, status: again.status, body: again.text }).toEqual({
        template,
        status: 304,
        body: '',
      });
      // And the document says so.
      expect({ template, declared: '304' in operation.responses }).toEqual({ template, declared: true });
    }
  });

  it('is rendered as a reference page from this site alone', async () => {
    const page = await h.get('/api/docs/', { accept: 'text/html' });
    expect(page.status).toBe(200);
    expect(page.text).not.toMatch(/src="https?:\/\//);
    expect(page.headers['content-security-policy']).toBeDefined();
  });
});

describe('availability', () => {
  it('has the same free blocks as the account’s own feed, in the zone asked for', async () => {
    const feed = eventsOf((await h.get(`/feeds/${ada.token}.ics`)).text).map((e) => [
      e.get('DTSTART'),
      e.get('DTEND'),
    ]);
    const answer = await h.get(
      `/api/v1/connections/${ada.connectionId}/availability?from=2026-03-02&to=2026-03-08&zone=America/New_York`,
      bearer(key),
    );
    expect(answer.status).toBe(200);
    const body = json(answer) as { zone: string; free: { start: string; end: string }[]; slots: unknown[] };
    expect(body.zone).toBe('America/New_York');
    expect(body.free.length).toBeGreaterThan(0);
    for (const block of body.free) {
      expect(block.start).toMatch(/-05:00$/);
      const utc = (iso: string) =>
        new Date(iso)
          .toISOString()
          .replace(/[-:]/g, '')
          .replace(/\.\d{3}/, '');
      expect(feed).toContainEqual([utc(block.start), utc(block.end)]);
    }
    expect(body.slots.length).toBeGreaterThanOrEqual(body.free.length);
  });

  it('revalidates: the same bytes get 304 with If-None-Match, a booking changes them', async () => {
    const path = `/api/v1/connections/${ada.connectionId}/availability?from=2026-03-02&to=2026-03-20`;
    const first = await h.get(path, bearer(key));
    expect(first.headers.etag).toMatch(/^"[\w-]+"$/);
    expect(first.headers['last-modified']).toBeDefined();
    expect((await h.get(path, { ...bearer(key), 'if-none-match': String(first.headers.etag) })).status).toBe(
      304,
    );
    const slot = await h.sync.db.prisma.slot.findFirstOrThrow({
      where: { connectionId: ada.connectionId, goneAt: null },
      orderBy: { startsAt: 'asc' },
    });
    h.sync.sim.control.book(slot.upstreamEventId, slot.startsAt.toISOString());
    await h.syncNow(ada.connectionId);
    const after = await h.get(path, { ...bearer(key), 'if-none-match': String(first.headers.etag) });
    expect(after.status).toBe(200);
    const busy = (json(after) as { busy: { start: string }[] }).busy;
    expect(busy.map((b) => new Date(b.start).getTime())).toContain(slot.startsAt.getTime());
  });

  it('of a team: when everyone is free, or who is, by name', async () => {
    const all = json(
      await h.get(`/api/v1/teams/${teamId}/availability?from=2026-03-02&to=2026-03-08`, bearer(key)),
    ) as {
      blocks: { start: string; end: string; free: string[] }[];
      members: { name: string }[];
    };
    const names = all.members.map((m) => m.name).sort();
    expect(all.blocks.length).toBeGreaterThan(0);
    for (const block of all.blocks) {
      expect([...block.free].sort()).toEqual(names);
      expect(new Date(block.end).getTime() - new Date(block.start).getTime()).toBeGreaterThanOrEqual(
        30 * 60_000,
      );
    }
    const any = json(
      await h.get(`/api/v1/teams/${teamId}/availability?from=2026-03-02&to=2026-03-08&mode=any`, bearer(key)),
    ) as {
      blocks: { free: string[] }[];
    };
    expect(any.blocks.some((b) => b.free.length === 1)).toBe(true);
    expect(JSON.stringify(any)).not.toContain('@example.test');
  });
});

describe('credentials and their scope', () => {
  it('a feed token reads its own connection only, without busy time when its feed shows none', async () => {
    const own = await h.get(`/api/v1/connections/${ada.connectionId}/availability`, bearer(ada.token));
    expect(own.status).toBe(200);
    expect((json(own) as { busy: unknown[] }).busy).toEqual([]);
    const foreign = await h.get(`/api/v1/connections/${other.connectionId}/availability`, bearer(ada.token));
    expect(foreign.status).toBe(404);
    expect(json(foreign).detail).toBe('No such connection or team, or this credential may not read it.');
    expect((await h.get(`/api/v1/teams/${teamId}/availability`, bearer(ada.token))).status).toBe(404);
    // A team feed's token reads its team.
    expect((await h.get(`/api/v1/teams/${teamId}/availability`, bearer(teamFeedToken))).status).toBe(200);
  });

  it('a feed of one event type reads that event type only', async () => {
    const types = json(await h.get(`/api/v1/connections/${ada.connectionId}/event-types`, bearer(key))) as {
      eventTypes: { id: string }[];
    };
    const [first, second] = types.eventTypes;
    const { token } = await h.feeds.create({ connectionId: ada.connectionId, upstreamEventId: first!.id });
    // Its feed shows free time: the blocks, each naming that event type only, and no slots.
    const scoped = json(
      await h.get(`/api/v1/connections/${ada.connectionId}/availability`, bearer(token)),
    ) as {
      free: { eventTypes: string[] }[];
      slots: unknown[];
    };
    expect(new Set(scoped.free.flatMap((b) => b.eventTypes))).toEqual(new Set([first!.id]));
    expect(scoped.slots).toEqual([]);
    expect(
      (
        await h.get(
          `/api/v1/connections/${ada.connectionId}/availability?eventType=${second!.id}`,
          bearer(token),
        )
      ).status,
    ).toBe(404);
    const listed = json(
      await h.get(`/api/v1/connections/${ada.connectionId}/event-types`, bearer(token)),
    ) as {
      eventTypes: { id: string }[];
    };
    expect(listed.eventTypes.map((e) => e.id)).toEqual([first!.id]);
  });

  it('an API key reads what it is scoped to; a revoked one, a wrong one or none gets 401 with a challenge', async () => {
    const narrow = await keys.create({ label: 'one', connectionIds: [other.connectionId], teamIds: [] });
    expect(
      (await h.get(`/api/v1/connections/${other.connectionId}/availability`, bearer(narrow.secret))).status,
    ).toBe(200);
    expect(
      (await h.get(`/api/v1/connections/${ada.connectionId}/availability`, bearer(narrow.secret))).status,
    ).toBe(404);
    await keys.revoke(narrow.key.id, new Date());
    for (const headers of [bearer(narrow.secret), bearer('sfk_wrong'), bearer('not-a-token'), {}]) {
      const refused = await h.get(`/api/v1/connections/${other.connectionId}/availability`, headers);
      expect(refused.status).toBe(401);
      expect(refused.headers['www-authenticate']).toBe('Bearer realm="slotfeed API"');
      expect(refused.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(json(refused)).toMatchObject({ type: 'about:blank', title: 'Unauthorized', status: 401 });
    }
    expect((await keys.list()).map((k) => k.id)).not.toContain(narrow.key.id);
  });

  it('keeps only the key’s hash', async () => {
    const made = await keys.create({ label: 'hash', connectionIds: [ada.connectionId], teamIds: [] });
    const row = await h.sync.db.prisma.apiKey.findUniqueOrThrow({ where: { id: made.key.id } });
    expect(Buffer.from(row.tokenHash).toString('utf8')).not.toContain(made.secret);
    expect(JSON.stringify(row)).not.toContain(made.secret.slice(4));
  });
});

describe('a feed token reads what its feed shows, no more', () => {
  const eventTypesOf = async () =>
    (
      json(await h.get(`/api/v1/connections/${ada.connectionId}/event-types`, bearer(key))) as {
        eventTypes: { id: string; enabled: boolean; secret: boolean }[];
      }
    ).eventTypes;

  it('a feed of all event types never reads a secret or a disabled one by naming it', async () => {
    const types = await eventTypesOf();
    const secret = types.find((t) => t.secret && t.enabled)!;
    const disabled = types.find((t) => !t.enabled)!;
    for (const named of [secret, disabled]) {
      const answer = await h.get(
        `/api/v1/connections/${ada.connectionId}/availability?eventType=${named.id}&from=2026-03-02&to=2026-03-20`,
        bearer(ada.token),
      );
      expect([named.id, answer.status]).toEqual([named.id, 404]);
      expect(answer.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    }
    // The key may name the secret one: it is in the key's scope.
    const byKey = json(
      await h.get(
        `/api/v1/connections/${ada.connectionId}/availability?eventType=${secret.id}&from=2026-03-02&to=2026-03-20`,
        bearer(key),
      ),
    ) as { slots: { eventType: string }[] };
    expect(byKey.slots.length).toBeGreaterThan(0);
  });

  it('a team feed’s token reads with its feed’s mode and minimum, never who is free individually', async () => {
    const { token } = await h.feeds.createTeamFeed({ teamId, options: { mode: 'all', minimum: 45 } });
    const base = `/api/v1/teams/${teamId}/availability?from=2026-03-02&to=2026-03-08`;
    const own = json(await h.get(base, bearer(token))) as {
      mode: string;
      minimumMinutes: number;
      members: unknown[];
      blocks: { free: string[] }[];
    };
    expect([own.mode, own.minimumMinutes]).toEqual(['all', 45]);
    expect(own.blocks.every((b) => b.free.length === own.members.length)).toBe(true);
    for (const widened of ['&mode=any', '&minimum=15', '&mode=all&minimum=30']) {
      const answer = await h.get(base + widened, bearer(token));
      expect([widened, answer.status]).toEqual([widened, 404]);
      expect(JSON.stringify(json(answer))).not.toMatch(/"blocks"/);
    }
    // The key with the team in scope chooses.
    expect((await h.get(`${base}&mode=any`, bearer(key))).status).toBe(200);
  });

  it('a client revalidating with If-Modified-Since alone gets what the feed shows after its owner changes it', async () => {
    const clock = h.sync.clock as FakeClock;
    const made = await h.feeds.create({ connectionId: ada.connectionId, options: { view: 'free+busy' } });
    const team = await h.feeds.createTeamFeed({ teamId, options: { mode: 'all', minimum: 30 } });
    // The store dates a new feed, and a membership change, by the database's clock; this site runs on the
    // simulator's, months earlier.
    await h.sync.db.prisma.feed.updateMany({
      where: { id: { in: [made.feed.id, team.feed.id] } },
      data: { createdAt: clock.now() },
    });
    await h.sync.db.prisma.team.update({ where: { id: teamId }, data: { membersChangedAt: clock.now() } });
    await h.deps.feedChanges.caughtUp();
    const reads = [
      { path: `/api/v1/connections/${ada.connectionId}/availability`, feed: made, options: { view: 'busy' } },
      { path: `/api/v1/connections/${ada.connectionId}/event-types`, feed: made, options: { view: 'free' } },
      { path: `/api/v1/teams/${teamId}/availability`, feed: team, options: { mode: 'all', minimum: 60 } },
    ] as const;
    for (const { path, feed, options } of reads) {
      const before = await h.get(path, bearer(feed.token));
      const modified = before.headers['last-modified']!;
      expect((await h.get(path, { ...bearer(feed.token), 'if-modified-since': modified })).status).toBe(304);
      clock.advance(60);
      await h.feeds.updateOptions(feed.feed.id, options, clock.now());
      await h.deps.feedChanges.caughtUp();
      const after = await h.get(path, { ...bearer(feed.token), 'if-modified-since': modified });
      expect([path, after.status]).toEqual([path, 200]);
      expect(Date.parse(after.headers['last-modified']!)).toBeGreaterThan(Date.parse(modified));
    }
  });
});

describe('bad requests', () => {
  it('say what was wrong, as problem details', async () => {
    const base = `/api/v1/connections/${ada.connectionId}/availability`;
    const cases: [string, RegExp][] = [
      [`${base}?zone=Mars/Olympus`, /zone/],
      [`${base}?from=2026-03-09&to=2026-03-02`, /`to` is before `from`/],
      [`${base}?from=2026-01-01&to=2027-06-01`, /at most 366 days/],
      [`${base}?from=yesterday`, /from/],
      [`${base}?colour=blue`, /colour|Unrecognized/i],
      ['/api/v1/connections/not-an-id/availability', /connectionId/],
      [`/api/v1/teams/${teamId}/availability?mode=most`, /mode/],
      // The CLI refuses the same pair with the same words (test/cli/teams-command.test.ts).
      [
        `/api/v1/teams/${teamId}/availability?mode=any&minimum=45`,
        /minimum applies to team feeds in mode all/,
      ],
    ];
    for (const [path, detail] of cases) {
      const response = await h.get(path, bearer(key));
      expect([path, response.status]).toEqual([path, 400]);
      expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(json(response).detail).toMatch(detail);
    }
    const nowhere = await h.get('/api/v1/nothing', bearer(key));
    expect(nowhere.status).toBe(404);
    expect(json(nowhere)).toMatchObject({ status: 404, instance: '/api/v1/nothing' });
  });

  it('an unknown event type is 404 with the problem named, not empty lists', async () => {
    const unknownType = await h.get(
      `/api/v1/connections/${ada.connectionId}/availability?eventType=no-such-type`,
      bearer(key),
    );
    expect(unknownType.status).toBe(404);
    expect(unknownType.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(json(unknownType).detail).toMatch(/event type "no-such-type"/);
  });

  it('the router’s own refusals are problem details too, with a status the document declares', async () => {
    const { responses } = document.paths['/api/v1/connections/{connectionId}/availability']!.get!;
    const cases = [
      `/api/v1/connections/%E0%A4%A/availability`,
      `/api/v1/connections/${'a'.repeat(600)}/availability`,
    ];
    for (const path of cases) {
      const response = await h.get(path, bearer(key));
      const what = path.slice(0, 40);
      expect([what, response.headers['content-type']]).toEqual([
        what,
        'application/problem+json; charset=utf-8',
      ]);
      expect([what, responses[String(response.status)]?.content]).toEqual([
        what,
        { 'application/problem+json': expect.anything() },
      ]);
      expect(json(response)).toMatchObject({ type: 'about:blank', status: response.status });
      expect(json(response).detail).not.toContain('aaaa');
    }
  });

  it('are rate-limited per credential, with Retry-After', async () => {
    const app = await buildWebApp({
      ...h.deps,
      settings: { ...h.deps.settings, rateLimits: { ...h.deps.settings.rateLimits, apiPerMinute: 3 } },
    });
    try {
      const url = `/api/v1/connections/${ada.connectionId}/event-types`;
      // A key of its own: counts live in Redis, where this file's other requests were counted too.
      const fresh = (await keys.create({ label: 'limited', connectionIds: [ada.connectionId], teamIds: [] }))
        .secret;
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await app.inject({ url, headers: bearer(fresh) })).statusCode);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const refused = await app.inject({ url, headers: bearer(fresh) });
      expect(refused.headers['retry-after']).toBeDefined();
      expect(refused.headers['content-type']).toBe('application/problem+json; charset=utf-8');
      expect(JSON.parse(refused.body).detail).toMatch(
        /^More than 3 requests a minute with this credential: try again in \d+ s\.$/,
      );
      // Another credential has its own allowance.
      const another = (await keys.create({ label: 'other', connectionIds: [ada.connectionId], teamIds: [] }))
        .secret;
      expect((await app.inject({ url, headers: bearer(another) })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});
