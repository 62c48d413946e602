// Every route the served OpenAPI document lists, called with every kind of credential (API keys of a wide and a
// narrow scope, a feed token of each view and event-type choice, a team feed token of each mode) and every query
// parameter that could widen what it reads. Each answer must stay inside the credential's scope — worked out
// here from the database rows and the feed's own options, not by the API's code — and be what the document says:
// a declared status, sent with the declared media type, matching the declared schema.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsPlugin, { type FormatsPlugin } from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { DateTime } from 'luxon';
import { FEED_VIEWS, type FeedView } from '../../src/feeds/feed-options.js';
import { createApiKeyStore } from '../../src/store/api-keys.js';
import { createTeamStore } from '../../src/store/teams.js';
import { buildWebApp } from '../../src/web/app.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { patient } from '../support/patience.js';

interface Operation {
  parameters?: { name: string; in: string }[];
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}

/** What each view of a person's feed shows: the parts of an availability answer its token may fill. */
const VIEW_PARTS: Record<FeedView, { free: boolean; slots: boolean; busy: boolean }> = {
  free: { free: true, slots: false, busy: false },
  // Free blocks are the slots' union: nothing the slots do not already say.
  slots: { free: true, slots: true, busy: false },
  busy: { free: false, slots: false, busy: true },
  'free+busy': { free: true, slots: false, busy: true },
};

type Scope =
  | { kind: 'key'; connectionIds: string[]; teamIds: string[] }
  | { kind: 'feed'; connectionId: string; named: string | null; view: FeedView; days: number }
  | { kind: 'team feed'; teamId: string; mode: 'all' | 'any'; minimum: number; days: number };

interface Credential {
  name: string;
  secret: string;
  scope: Scope;
}

interface EventTypeRow {
  id: string;
  enabled: boolean;
  secret: boolean;
}

/** The database's rows, read once after setup: what the scope is checked against. */
interface Truth {
  eventTypes: Map<string, EventTypeRow[]>;
  slots: Map<string, { eventId: string; start: number }[]>;
  bookings: Map<string, { start: number; end: number; eventIds: string[] }[]>;
  timezone: Map<string, string>;
  memberNames: Map<string, string[]>;
}

const NOW = '2026-03-02T09:00:00Z';
const NOBODY = '00000000-0000-4000-8000-000000000000';

let h: WebHarness;
let app: FastifyInstance;
/** Feeds whose share links the routes manage, by id: whose they are. */
const feedOwners = new Map<string, { connectionId?: string; teamId?: string }>();
let shareLinkId: string;
let document: OpenApiDocument;
let truth: Truth;
const credentials: Credential[] = [];
let ada: string;
let other: string;
let teamId: string;
const typeIds: Record<'plain' | 'secret' | 'disabled' | 'foreign', string> = {
  plain: '',
  secret: '',
  disabled: '',
  foreign: '',
};

beforeAll(async () => {
  h = await createWebHarness('web_api_scope', { simulator: { users: 3 } });
  const prisma = h.sync.db.prisma;
  const connect = async (i: number) => (await h.connectViaWeb(h.sync.sim.users[i]!.email)).connectionId;
  ada = await connect(0);
  other = await connect(2);
  await h.syncNow(ada);
  await h.syncNow(other);
  const types = await prisma.eventType.findMany({ where: { validTo: null } });
  const adaTypes = types.filter((t) => t.connectionId === ada);
  typeIds.plain = adaTypes.find((t) => t.enabled && !t.secret)!.upstreamEventId;
  typeIds.secret = adaTypes.find((t) => t.enabled && t.secret)!.upstreamEventId;
  typeIds.disabled = adaTypes.find((t) => !t.enabled)!.upstreamEventId;
  typeIds.foreign = types.find((t) => t.connectionId === other && t.enabled)!.upstreamEventId;
  // Busy time of a public and of a secret event type, within the first days.
  for (const eventId of [typeIds.plain, typeIds.secret]) {
    const slot = await prisma.slot.findFirstOrThrow({
      where: { connectionId: ada, upstreamEventId: eventId, goneAt: null, startsAt: { gt: new Date(NOW) } },
      orderBy: { startsAt: 'asc' },
    });
    h.sync.sim.control.book(eventId, slot.startsAt.toISOString());
    await h.syncNow(ada);
  }

  const teams = createTeamStore(prisma);
  teamId = (await teams.create('Support')).id;
  await teams.addMembers(teamId, [ada, other]);

  const keys = createApiKeyStore(prisma);
  const key = async (name: string, connectionIds: string[], teamIds: string[]) =>
    credentials.push({
      name,
      secret: (await keys.create({ label: name, connectionIds, teamIds })).secret,
      scope: { kind: 'key', connectionIds, teamIds },
    });
  await key('admin key', [ada, other], [teamId]);
  await key('scoped key', [other], []);

  const defaultDays = h.deps.settings.feedDefaultDays;
  const dayChoices = [3, undefined, 10];
  let n = 0;
  for (const view of FEED_VIEWS) {
    for (const choice of ['all', 'plain', 'secret', 'disabled'] as const) {
      const days = dayChoices[n++ % dayChoices.length];
      const named = choice === 'all' ? null : typeIds[choice];
      const { token } = await h.feeds.create({
        connectionId: ada,
        upstreamEventId: named,
        options: { view, ...(days === undefined ? {} : { days }) },
      });
      credentials.push({
        name: `feed token (${view}, ${choice} event types${days === undefined ? '' : `, ${days} days`})`,
        secret: token,
        scope: { kind: 'feed', connectionId: ada, named, view, days: days ?? defaultDays },
      });
    }
  }
  for (const [mode, minimum, days] of [
    ['all', undefined, undefined],
    ['all', 90, 5],
    ['any', undefined, 4],
  ] as const) {
    const { token } = await h.feeds.createTeamFeed({
      teamId,
      options: {
        mode,
        ...(minimum === undefined ? {} : { minimum }),
        ...(days === undefined ? {} : { days }),
      },
    });
    credentials.push({
      name: `team feed token (${mode}${minimum === undefined ? '' : `, ${minimum} min`})`,
      secret: token,
      scope: { kind: 'team feed', teamId, mode, minimum: minimum ?? 30, days: days ?? defaultDays },
    });
  }

  // A person's and a team's feed whose share links keys may manage, and a link to revoke.
  const [adaFeed] = await h.feeds.list({ connectionId: ada });
  const [teamFeed] = await h.feeds.list({ teamId });
  feedOwners.set(adaFeed!.id, { connectionId: ada });
  feedOwners.set(teamFeed!.id, { teamId });
  shareLinkId = (
    await h.deps.shareLinks.create({
      feedId: adaFeed!.id,
      label: 'scope',
      expiresAt: null,
      now: h.sync.clock.now(),
    })
  ).link.id;

  const [slots, bookings, connections, members] = await Promise.all([
    prisma.slot.findMany({ where: { goneAt: null } }),
    prisma.booking.findMany(),
    prisma.connection.findMany(),
    prisma.teamMember.findMany({ include: { connection: true } }),
  ]);
  // Members are named by display name; the simulator gives everyone one.
  expect(members.every((m) => m.connection.displayName)).toBe(true);
  const group = <T, V>(rows: T[], keyOf: (row: T) => string, value: (row: T) => V) => {
    const map = new Map<string, V[]>();
    for (const row of rows) map.set(keyOf(row), [...(map.get(keyOf(row)) ?? []), value(row)]);
    return map;
  };
  truth = {
    eventTypes: group(
      types,
      (t) => t.connectionId,
      (t) => ({ id: t.upstreamEventId, enabled: t.enabled, secret: t.secret }),
    ),
    slots: group(
      slots,
      (s) => s.connectionId,
      (s) => ({ eventId: s.upstreamEventId, start: s.startsAt.getTime() }),
    ),
    bookings: group(
      bookings,
      (b) => b.connectionId,
      (b) => ({ start: b.startsAt.getTime(), end: b.endsAt.getTime(), eventIds: b.eventIds }),
    ),
    timezone: new Map(connections.map((c) => [c.id, c.timezone ?? 'UTC'])),
    memberNames: group(
      members,
      (m) => m.teamId,
      (m) => m.connection.displayName!,
    ),
  };

  // Its own app, without the per-credential rate limit: this test sends a few hundred requests per credential.
  app = await buildWebApp({
    ...h.deps,
    settings: { ...h.deps.settings, rateLimits: { ...h.deps.settings.rateLimits, apiPerMinute: 0 } },
  });
  document = (await app.inject({ url: '/api/openapi.json' })).json();
}, patient(120_000));

afterAll(async () => {
  await app?.close();
  await h?.close();
});

/** Path parameters: ids of each kind in scope of some credential, and one of nothing. */
const pathValues = (name: string): string[] => {
  const values: Record<string, string[]> = {
    connectionId: [ada, other, NOBODY],
    teamId: [teamId, NOBODY],
    feedId: [...feedOwners.keys(), NOBODY],
    shareLinkId: [shareLinkId, NOBODY],
  };
  const found = values[name];
  if (!found) throw new Error(`no values for the path parameter ${name}: give this test some`);
  return found;
};

/** Path segments the router refuses: a bad percent-encoding, one past the longest parameter it takes. */
const MALFORMED_PATH_VALUES = ['%E0%A4%A', '%ZZ', 'a'.repeat(600)];

/** Query parameters that choose what is read: every value a credential could try to widen its reach with. */
const scopeValues = (name: string): (string | undefined)[] | undefined =>
  ({
    eventType: [
      undefined,
      typeIds.plain,
      typeIds.secret,
      typeIds.disabled,
      typeIds.foreign,
      'evt_no_such_type',
    ],
    mode: [undefined, 'all', 'any'],
    minimum: [undefined, '1', '45', '1440'],
  })[name];

/** The range and zone: the past, a year ahead, zones at both ends of the offsets. */
const RANGES: Record<string, string>[] = [
  {},
  { from: '2026-02-01', to: '2026-02-28' },
  { from: '2026-02-25', to: '2027-02-20' },
  { from: '2026-02-25', to: '2027-02-20', zone: 'Pacific/Kiritimati' },
  { zone: 'Pacific/Pago_Pago' },
];
const RANGE_PARAMETERS = new Set(['from', 'to', 'zone']);
/** Not documented: strict query schemas must refuse them, never let them widen an answer. */
const UNDOCUMENTED: Record<string, string>[] = [
  { view: 'busy' },
  { busy: 'true' },
  { view: 'free+busy' },
  { include: 'secret' },
];

function cartesian(choices: [string, (string | undefined)[]][]): Record<string, string>[] {
  return choices.reduce<Record<string, string>[]>(
    (combos, [name, values]) =>
      combos.flatMap((combo) =>
        values.map((value) => (value === undefined ? combo : { ...combo, [name]: value })),
      ),
    [{}],
  );
}

function queriesFor(operation: Operation): Record<string, string>[] {
  const query = (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
  const choosing: [string, (string | undefined)[]][] = [];
  for (const name of query) {
    if (RANGE_PARAMETERS.has(name)) continue;
    const values = scopeValues(name);
    if (!values) throw new Error(`no values for the query parameter ${name}: give this test some`);
    choosing.push([name, values]);
  }
  const ranges = RANGES.filter((range) => Object.keys(range).every((name) => query.includes(name)));
  return [
    ...cartesian(choosing).flatMap((choice) => ranges.map((range) => ({ ...choice, ...range }))),
    ...UNDOCUMENTED,
  ];
}

// ---- The scope, as this test understands it ----

const typesOf = (connectionId: string) => truth.eventTypes.get(connectionId) ?? [];

/** The event types a credential may see on a connection, whatever it asks. */
function visibleTypes(scope: Scope, connectionId: string): Set<string> {
  const types = typesOf(connectionId);
  if (scope.kind === 'key') return new Set(types.map((t) => t.id));
  if (scope.kind === 'team feed') return new Set();
  if (scope.named !== null)
    return new Set(types.filter((t) => t.id === scope.named && t.enabled).map((t) => t.id));
  return new Set(types.filter((t) => t.enabled && !t.secret).map((t) => t.id));
}

/** The event types whose slots an availability answer may carry, for this question. */
function readableTypes(scope: Scope, connectionId: string, asked: string | undefined): Set<string> {
  const visible = visibleTypes(scope, connectionId);
  const enabled = new Set(
    typesOf(connectionId)
      .filter((t) => t.enabled)
      .map((t) => t.id),
  );
  if (asked !== undefined) return new Set([asked].filter((id) => visible.has(id) && enabled.has(id)));
  if (scope.kind === 'key') {
    return new Set(
      typesOf(connectionId)
        .filter((t) => t.enabled && !t.secret)
        .map((t) => t.id),
    );
  }
  return visible;
}

function mayRead(scope: Scope, ids: Record<string, string>): boolean {
  // A feed's share links: managed by an API key whose scope holds the feed's owner; never by a feed's token.
  if (ids.feedId !== undefined) {
    const owner = feedOwners.get(ids.feedId);
    if (scope.kind !== 'key' || owner === undefined) return false;
    return owner.connectionId !== undefined
      ? scope.connectionIds.includes(owner.connectionId)
      : scope.teamIds.includes(owner.teamId!);
  }
  if (ids.connectionId !== undefined) {
    if (scope.kind === 'key') return scope.connectionIds.includes(ids.connectionId);
    return scope.kind === 'feed' && scope.connectionId === ids.connectionId;
  }
  if (ids.teamId !== undefined) {
    if (scope.kind === 'key') return scope.teamIds.includes(ids.teamId);
    return scope.kind === 'team feed' && scope.teamId === ids.teamId;
  }
  return false;
}

/** The instants a feed shows: from the start of today in its zone, its days. */
function feedWindow(zone: string, days: number): [number, number] {
  const start = DateTime.fromISO(NOW, { zone }).startOf('day');
  return [start.toMillis(), start.plus({ days }).toMillis()];
}

type Interval = { start: string; end: string };
const at = (iso: string) => new Date(iso).getTime();

/** Every way a 200 answer reaches past the credential's scope, each with an example; empty when it stays inside. */
function overreach(
  scope: Scope,
  template: string,
  ids: Record<string, string>,
  query: Record<string, string>,
  body: Record<string, unknown>,
): Map<string, string> {
  const problems = new Map<string, string>();
  const flag = (kind: string, example: string) => {
    if (!problems.has(kind)) problems.set(kind, example);
  };
  if (!mayRead(scope, ids)) return new Map([['reads what is outside its scope', JSON.stringify(ids)]]);
  const connectionId = ids.connectionId;
  // Whatever the route: no event type id the credential may not see appears anywhere in the answer.
  const hidden = new Set(
    [...truth.eventTypes.entries()].flatMap(([owner, types]) => {
      const visible =
        scope.kind === 'key' && !scope.connectionIds.includes(owner) ? new Set() : visibleTypes(scope, owner);
      return types.filter((t) => !visible.has(t.id)).map((t) => t.id);
    }),
  );
  const text = JSON.stringify(body);
  for (const id of hidden) if (text.includes(`"${id}"`)) flag('names an event type it may not see', id);

  if (template.endsWith('/connections/{connectionId}/availability') && connectionId !== undefined) {
    const answer = body as {
      free: (Interval & { eventTypes: string[] })[];
      slots: (Interval & { eventType: string })[];
      busy: Interval[];
    };
    const readable = readableTypes(scope, connectionId, query.eventType);
    const parts = scope.kind === 'feed' ? VIEW_PARTS[scope.view] : { free: true, slots: true, busy: true };
    const [from, to] =
      scope.kind === 'feed'
        ? feedWindow(truth.timezone.get(connectionId)!, scope.days)
        : [-Infinity, Infinity];
    const inWindow = (block: Interval) => at(block.start) >= from && at(block.start) < to;
    const slotStarts = new Set(
      (truth.slots.get(connectionId) ?? [])
        .filter((s) => readable.has(s.eventId))
        .map((s) => `${s.eventId}@${s.start}`),
    );
    for (const [part, list] of Object.entries(answer) as [keyof typeof parts, Interval[]][]) {
      if (part in parts && !parts[part] && list.length > 0) flag(`${part} shown: its feed shows none`, '');
    }
    for (const slot of answer.slots) {
      if (!slotStarts.has(`${slot.eventType}@${at(slot.start)}`))
        flag('a slot of an event type it may not read', `${slot.eventType} ${slot.start}`);
      if (!inWindow(slot)) flag('slots outside its feed’s days', slot.start);
    }
    for (const block of answer.free) {
      if (!block.eventTypes.every((id) => readable.has(id)))
        flag('free time of an event type it may not read', `${block.start} ${block.eventTypes}`);
      if (!block.eventTypes.some((id) => slotStarts.has(`${id}@${at(block.start)}`)))
        flag('free time no readable slot starts', block.start);
      if (!inWindow(block)) flag('free time outside its feed’s days', block.start);
    }
    const bookings = (truth.bookings.get(connectionId) ?? []).filter((b) =>
      b.eventIds.some((id) => readable.has(id)),
    );
    for (const block of answer.busy) {
      if (!bookings.some((b) => b.start < at(block.end) && at(block.start) < b.end))
        flag('busy time of no booking it may read', block.start);
      if (!inWindow(block)) flag('busy time outside its feed’s days', block.start);
    }
  }

  if (template.endsWith('/connections/{connectionId}/event-types') && connectionId !== undefined) {
    const visible = visibleTypes(scope, connectionId);
    for (const type of (body as { eventTypes: { id: string }[] }).eventTypes)
      if (!visible.has(type.id)) flag('lists an event type it may not see', type.id);
  }

  if (template.endsWith('/teams/{teamId}/availability') && scope.kind === 'team feed') {
    const answer = body as {
      mode: string;
      minimumMinutes: number | null;
      blocks: (Interval & { free: string[] })[];
    };
    const minimum = scope.mode === 'all' ? scope.minimum : null;
    if (answer.mode !== scope.mode || answer.minimumMinutes !== minimum)
      flag('another mode or minimum than its feed’s', `${answer.mode}, ${answer.minimumMinutes}`);
    const [from, to] = feedWindow('UTC', scope.days);
    const everyone = [...(truth.memberNames.get(scope.teamId) ?? [])].sort();
    for (const block of answer.blocks) {
      if (at(block.start) < from || at(block.start) >= to)
        flag('team blocks outside its feed’s days', block.start);
      if (scope.mode === 'all') {
        if (JSON.stringify([...block.free].sort()) !== JSON.stringify(everyone))
          flag('names who is free, its feed shows when everyone is', block.free.join(', '));
        if (at(block.end) - at(block.start) < scope.minimum * 60_000)
          flag('team blocks shorter than its feed’s minimum', block.start);
      }
    }
  }
  return problems;
}

// ---- The answers as the document declares them ----

function documentChecks(): (
  operation: Operation,
  status: number,
  mediaType: string,
  body: unknown,
) => string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  // ajv-formats is CommonJS with a `default` beside itself; either is the plugin.
  const plugin = addFormatsPlugin as unknown as FormatsPlugin & { default?: FormatsPlugin };
  (plugin.default ?? plugin)(ajv);
  for (const [name, schema] of Object.entries(document.components.schemas))
    ajv.addSchema(schema as object, `#/components/schemas/${name}`);
  const compiled = new Map<unknown, ValidateFunction>();
  return (operation, status, mediaType, body) => {
    const declared = operation.responses[String(status)];
    if (!declared) return [`status ${status} is not declared`];
    const content = declared.content?.[mediaType];
    if (!content)
      return [`status ${status} sent as ${mediaType}, declared as ${Object.keys(declared.content ?? {})}`];
    let check = compiled.get(content.schema);
    if (!check) compiled.set(content.schema, (check = ajv.compile(content.schema as object)));
    return check(body) ? [] : [`status ${status}: ${ajv.errorsText(check.errors)}`];
  };
}

async function inPool<T>(items: T[], width: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await run(items[next++]!);
    }),
  );
}

it(
  'every documented route, with every credential and every widening parameter, answers within the credential’s scope, as documented',
  async () => {
    const conforms = documentChecks();
    // One line per kind of failure, with its first example: thousands of answers can fail the same way.
    const outOfScope = new Map<string, string>();
    const undocumented = new Map<string, string>();
    const note = (failures: Map<string, string>, kind: string, example: string) => {
      if (!failures.has(kind)) failures.set(kind, example);
    };
    const ownAnswers = new Map<string, number>();
    const withData = new Set<string>();
    let requests = 0;
    const calls: {
      credential: Credential;
      template: string;
      method: string;
      operation: Operation;
      ids: Record<string, string>;
      query: Record<string, string>;
    }[] = [];
    for (const [template, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const pathNames = (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
        const idSets = cartesian(pathNames.map((name) => [name, pathValues(name)]));
        for (const credential of credentials) {
          for (const ids of idSets)
            for (const query of queriesFor(operation))
              calls.push({ credential, template, method, operation, ids, query });
          // What the router itself refuses, before any route runs, is answered as documented too.
          for (const malformed of MALFORMED_PATH_VALUES) {
            const ids = Object.fromEntries(pathNames.map((name) => [name, malformed]));
            calls.push({ credential, template, method, operation, ids, query: {} });
          }
        }
      }
    }
    await inPool(calls, 4, async ({ credential, template, method, operation, ids, query }) => {
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) => ids[name]!);
      const search = new URLSearchParams(query).toString();
      const response = await app.inject({
        method: method.toUpperCase() as 'GET',
        url: search === '' ? path : `${path}?${search}`,
        headers: { authorization: `Bearer ${credential.secret}` },
      });
      requests += 1;
      const what = `${credential.name}: ${method.toUpperCase()} ${template} ${JSON.stringify(ids)} ${search}`;
      const mediaType = String(response.headers['content-type'] ?? '')
        .split(';')[0]!
        .trim();
      const body: unknown = response.body === '' ? null : JSON.parse(response.body);
      for (const problem of conforms(operation, response.statusCode, mediaType, body))
        note(undocumented, `${method.toUpperCase()} ${template}: ${problem}`, what);
      if (response.statusCode === 200) {
        const answer = body as Record<string, unknown>;
        for (const [kind, example] of overreach(credential.scope, template, ids, query, answer))
          note(outOfScope, `${credential.name}: ${kind}`, `${what} (${example})`);
        if (mayRead(credential.scope, ids) && search === '')
          ownAnswers.set(credential.name, (ownAnswers.get(credential.name) ?? 0) + 1);
        const items = ['free', 'slots', 'busy', 'blocks', 'eventTypes'].flatMap(
          (part) => (body as Record<string, unknown[] | undefined>)[part] ?? [],
        );
        if (items.length > 0) withData.add(credential.name);
      } else if (![400, 404, 414].includes(response.statusCode)) {
        note(outOfScope, `${credential.name}: status ${response.statusCode}`, what);
      }
    });
    const report = (failures: Map<string, string>) =>
      [...failures].map(([kind, example]) => `${kind} — e.g. ${example}`);
    expect(report(outOfScope)).toEqual([]);
    expect(report(undocumented)).toEqual([]);
    // Not a test that passes by refusing everything: each credential reads what is its own.
    expect(credentials.filter((c) => !ownAnswers.has(c.name)).map((c) => c.name)).toEqual([]);
    // … and something in it, unless its feed names an event type that is disabled (such a feed shows nothing).
    const showNothing = (c: Credential) => c.scope.kind === 'feed' && c.scope.named === typeIds.disabled;
    expect(credentials.filter((c) => !showNothing(c) && !withData.has(c.name)).map((c) => c.name)).toEqual(
      [],
    );
    expect(requests).toBe(calls.length);
  },
  patient(600_000),
);
