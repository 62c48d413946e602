// Fault: the upstream answers 200 with hostile payloads — wrong types, missing fields, absurd dates, slot
// keys that are not instants, duplicate ids, 50 MB bodies, deeply nested JSON, bodies that are not JSON.
// Each must end the run with a clear invalid_payload error naming the endpoint, keep the last good snapshot
// untouched, and leave the worker process alive to take the next job.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DateTime } from 'luxon';
import type { FaultOutcome, SimUserDetails } from '../../src/simulator/index.js';
import { enqueueSyncs } from '../../src/sync/queues.js';
import { startWorkerProcess, type SlotfeedProcess } from '../support/child-process.js';
import { createSyncHarness, type SyncHarness } from '../support/sync-harness.js';
import { expectedSync, simUser, snapshotRowCounts, storedOpenSlots } from '../support/sync-truth.js';
import { waitFor } from '../support/wait-for.js';
import { duplicateOpenSlots } from './chaos-support.js';
import { patient } from '../support/patience.js';

const EVENTS = 'GET /events';
const PROFILE = 'GET /users/me';
const OVERVIEW = 'GET /calendars/{event_id}';
const SLOTS = 'GET /calendars/{event_id}/slots';
const MB = 1024 * 1024;

let h: SyncHarness;
let worker: SlotfeedProcess;
let connectionId: string;
let user: SimUserDetails;

beforeAll(async () => {
  h = await createSyncHarness('chaos_hostile', {
    clock: null,
    simulator: { users: 1 },
    // One upstream call at a time, so the first slots call is for a date the test can name.
    env: { SYNC_HORIZON_DAYS: '7', WORKER_CONCURRENCY: '1', SYNC_FETCH_CONCURRENCY: '1' },
  });
  user = simUser(h.sim, h.sim.users[0]!.email);
  connectionId = await h.connect(user.email);
  worker = await startWorkerProcess({ ...h.env, LOG_LEVEL: 'info' });
}, patient(60_000));
afterAll(async () => {
  if (worker && worker.child.exitCode === null && worker.child.signalCode === null)
    worker.child.kill('SIGKILL');
  await worker?.exited;
  await h?.close();
});

const json = (endpoint: string, body: unknown): FaultOutcome =>
  ({
    endpoint,
    kind: 'raw',
    status: 200,
    contentType: 'application/json',
    body: JSON.stringify(body),
  }) as FaultOutcome;
const text = (endpoint: string, body: string, contentType = 'application/json'): FaultOutcome =>
  ({ endpoint, kind: 'raw', status: 200, contentType, body }) as FaultOutcome;

function hostileKinds(): [string, FaultOutcome][] {
  const event = user.event_types.find((e) => e.enabled)!;
  const { event_id: _id, ...eventWithoutId } = event;
  const { email: _email, ...profileWithoutEmail } = user.profile;
  const zone = user.timezone;
  const overview = (availability: Record<string, unknown>) => ({
    timezone: zone,
    availability: {
      disabled_dates: { days: [], months: [] },
      first_available_date: '2026-03-02',
      weekly: {
        week_days: { mon: true, tue: true, wed: true, thu: true, fri: true, sat: false, sun: false },
      },
      last_available_date: null,
      available_dates: [],
      ...availability,
    },
  });
  const slots = (slotList: unknown) => ({ timezone: zone, booking_type: 'single', slot_list: slotList });
  const deep = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
  return [
    ['event list is an object', json(EVENTS, { events: [event] })],
    ['duration as a string', json(EVENTS, [{ ...event, duration_minutes: '30' }])],
    ['event without event_id', json(EVENTS, [eventWithoutId])],
    ['enabled as "yes"', json(EVENTS, [{ ...event, enabled: 'yes' }])],
    ['absurd duration', json(EVENTS, [{ ...event, duration_minutes: 1e12 }])],
    ['two event types with one id', json(EVENTS, [event, { ...event, title: 'twin' }])],
    ['unknown time zone', json(PROFILE, { ...user.profile, timezone: 'Mars/Olympus_Mons' })],
    ['profile without email', json(PROFILE, profileWithoutEmail)],
    ['name as a number', json(PROFILE, { ...user.profile, name: 42 })],
    ['30 February', json(OVERVIEW, overview({ available_dates: ['2026-02-30'] }))],
    ['year zero', json(OVERVIEW, overview({ first_available_date: '0000-00-00' }))],
    ['year 275760', json(OVERVIEW, overview({ available_dates: ['+275760-09-13'] }))],
    ['month 13', json(OVERVIEW, overview({ disabled_dates: { days: [], months: [13] } }))],
    ['availability null', json(OVERVIEW, { timezone: zone, availability: null })],
    ['slot key in words', json(SLOTS, slots({ 'tomorrow at nine': {} }))],
    ['slot key without zone', json(SLOTS, slots({ '2026-03-03T09:00:00': {} }))],
    ['slot key out of range', json(SLOTS, slots({ '2026-13-45T25:61:00Z': {} }))],
    ['slot in year 1', json(SLOTS, slots({ '0001-01-01T00:00:00Z': {} }))],
    ['slot list as an array', json(SLOTS, slots(['2026-03-03T09:00:00Z']))],
    ['slot value a string', json(SLOTS, slots({ '2026-03-03T09:00:00Z': 'x' }))],
    ['HTML on a 200', text(EVENTS, '<html><body>maintenance</body></html>', 'text/html')],
    ['empty body', text(PROFILE, '')],
    ['JSON null', text(OVERVIEW, 'null')],
    ['cut-off JSON', text(SLOTS, `{"timezone":"${zone}","slot_list":{"2026-03-0`)],
    [
      '50 MB with Content-Length',
      {
        endpoint: SLOTS,
        kind: 'raw',
        status: 200,
        contentType: 'application/json',
        generate: { shape: 'large', bytes: 50 * MB, declareLength: true },
      },
    ],
    [
      '50 MB streamed',
      {
        endpoint: EVENTS,
        kind: 'raw',
        status: 200,
        contentType: 'application/json',
        generate: { shape: 'large', bytes: 50 * MB, declareLength: false },
      },
    ],
    [
      '1 000 000 nested arrays',
      {
        endpoint: EVENTS,
        kind: 'raw',
        status: 200,
        contentType: 'application/json',
        generate: { shape: 'deep', depth: 1_000_000 },
      },
    ],
    [
      'nested 100 000 deep in a slot',
      text(SLOTS, `{"timezone":"${zone}","slot_list":{"2026-03-03T09:00:00Z":${deep(100_000)}}}`),
    ],
  ];
}

async function runOneSync(attempts: number) {
  const [job] = await enqueueSyncs(h.clients.syncQueue, [connectionId], attempts);
  const state = await waitFor(
    () => h.clients.syncQueue.getJobState(job!.id!),
    (s) => s === 'completed' || s === 'failed',
    { what: `job ${job!.id} to finish` },
  );
  const run = await h.clients.prisma.syncRun.findFirstOrThrow({
    where: { connectionId, jobId: job!.id! },
    orderBy: { startedAt: 'desc' },
  });
  return { state, run };
}

async function lastGood() {
  const connection = await h.clients.prisma.connection.findUniqueOrThrow({ where: { id: connectionId } });
  return {
    slots: await storedOpenSlots(h.clients.prisma, connectionId),
    rows: await snapshotRowCounts(h.clients.prisma),
    feedVersion: connection.feedVersion,
    lastGoodSyncAt: connection.lastGoodSyncAt?.toISOString(),
  };
}

describe('hostile upstream payloads', () => {
  it(
    'fails each run clearly, keeps the last good snapshot and the worker alive',
    async () => {
      expect((await runOneSync(1)).state).toBe('completed');
      const good = await lastGood();
      expect(good.slots.length).toBeGreaterThan(0);

      const kinds = hostileKinds();
      expect(kinds.length).toBeGreaterThanOrEqual(20);
      const outcomes: Record<string, string> = {};
      for (const [name, outcome] of kinds) {
        h.sim.control.setFaults({ queue: [outcome] });
        const { state, run } = await runOneSync(1);
        outcomes[name] = `${state} ${run.errorCode ?? ''}: ${run.errorMessage ?? ''}`;
        expect({ name, state, code: run.errorCode }).toEqual({
          name,
          state: 'failed',
          code: 'invalid_payload',
        });
        expect(run.errorMessage).toContain(outcome.endpoint);
        expect(h.sim.control.getFaults().queue).toEqual([]);
        expect(await lastGood()).toEqual(good);
      }
      expect(worker.child.exitCode).toBeNull();
      expect(worker.child.signalCode).toBeNull();
      // Alive and well: the next ordinary sync goes through on the same process.
      const after = await runOneSync(1);
      expect(after.state).toBe('completed');
      expect(after.run.outcome).toBe('succeeded');
    },
    patient(120_000),
  );

  it('merges duplicate slot keys (two spellings of one instant, or a repeated key) into one slot', async () => {
    // The first slots call asks for the first available date of the first enabled event type.
    const firstEnabled = user.event_types.find((e) => e.enabled)!;
    const truth = expectedSync(h.sim, user.email, new Date(), 7);
    const date = truth.availableDates.get(firstEnabled.event_id)![0]!;
    const instant = DateTime.fromISO(`${date}T12:00`, { zone: user.timezone })
      .toUTC()
      .toFormat("yyyy-MM-dd'T'HH:mm:ss");
    const body =
      `{"timezone":"${user.timezone}","booking_type":"single","slot_list":{"${instant}Z":{},` +
      `"${instant}.000Z":{},"${instant}Z":{}}}`;
    h.sim.control.setFaults({ queue: [text(SLOTS, body)] });
    const { state } = await runOneSync(1);
    expect(state).toBe('completed');
    const stored = await h.clients.prisma.slot.count({
      where: {
        connectionId,
        upstreamEventId: firstEnabled.event_id,
        startsAt: new Date(`${instant}Z`),
        goneAt: null,
      },
    });
    expect(stored).toBe(1);
    expect(await duplicateOpenSlots(h.clients.prisma)).toBe(0);
  });
});
