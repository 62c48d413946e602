// Every report over a known history (test/reports/known-history.ts), asserted exactly in table, CSV and JSON,
// through the real `slotfeed report` command; --at in the past; days across the Europe/Berlin DST switch.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCli } from '../../src/cli/program.js';
import type { FeedOptions } from '../../src/feeds/feed-options.js';
import { parseReportQuery } from '../../src/reports/report-query.js';
import { runReport } from '../../src/reports/run-report.js';
import { createReportStore } from '../../src/store/reports.js';
import { buildKnownHistory, T3, type KnownHistory } from './known-history.js';
import { patient } from '../support/patience.js';

let k: KnownHistory;
let berlin: string;
let email: string;

beforeAll(async () => {
  k = await buildKnownHistory('reports');
  berlin = k.berlin.connectionId;
  email = k.berlin.email;
}, patient(60_000));
afterAll(async () => {
  await k?.h.close();
});

async function slotfeed(...args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, k.h.env, {
    stdout: { write: (t) => void (stdout += t), isTTY: false },
    stderr: { write: (t) => void (stderr += t) },
  });
  return { code, stdout, stderr };
}

const csvRows = (text: string) =>
  text
    .split('\r\n')
    .filter((line) => line !== '')
    .map((line) => line.split(','));

describe('availability', () => {
  it('as of now: the open slots ahead, per local day (table)', async () => {
    const result = await runReport(
      createReportStore(k.h.db.prisma),
      parseReportQuery('availability', { connection: berlin }, k.clock.now()),
    );
    expect(k.clock.now().toISOString()).toBe(T3);
    expect(result.rows.map((r) => [r.day, r.free_slots, r.free_minutes])).toEqual([
      ['2026-03-30', 2, 120],
      ['2026-03-31', 3, 180],
      ['2026-04-01', 3, 180],
      ['2026-04-02', 3, 180],
    ]);
    const table = await slotfeed('report', 'availability', '--connection', berlin, '--at', T3);
    expect(table.code).toBe(0);
    const pad = email.padEnd(Math.max(email.length, 'connection'.length));
    const dash = '-'.repeat(pad.length);
    expect(table.stdout).toBe(
      `Availability — free slots as of Mon 30 Mar 2026, 06:00 UTC, days in each connection's time zone, all days\n` +
        `${'connection'.padEnd(pad.length)}  event type  day         free slots  free minutes\n` +
        `${dash}  ----------  ----------  ----------  ------------\n` +
        `${pad}  Intro call  2026-03-30  2           120\n` +
        `${pad}  Intro call  2026-03-31  3           180\n` +
        `${pad}  Intro call  2026-04-01  3           180\n` +
        `${pad}  Intro call  2026-04-02  3           180\n` +
        `\nfree slots: 11\nfree minutes: 660\n`,
    );
  });

  it('as of a past instant, days in Berlin across the DST switch (CSV) and in UTC (JSON)', async () => {
    const at = '2026-03-27T18:01:00Z';
    const csv = await slotfeed(
      'report',
      'availability',
      '--connection',
      berlin,
      '--at',
      at,
      '--format',
      'csv',
    );
    expect(csv.code).toBe(0);
    const event = k.berlin.eventId;
    expect(csvRows(csv.stdout)).toEqual([
      ['connection_id', 'connection', 'event_id', 'event', 'day', 'free_slots', 'free_minutes'],
      [berlin, email, event, 'Intro call', '2026-03-28', '2', '120'],
      [berlin, email, event, 'Intro call', '2026-03-29', '3', '180'],
      [berlin, email, event, 'Intro call', '2026-03-30', '3', '180'],
    ]);

    const json = await slotfeed(
      'report',
      'availability',
      '--connection',
      berlin,
      '--at',
      at,
      '--tz',
      'UTC',
      '--format',
      'json',
    );
    const parsed = JSON.parse(json.stdout) as {
      rows: Record<string, unknown>[];
      summary: unknown;
      timezone: string;
    };
    expect(parsed.timezone).toBe('UTC');
    // The 00:00 Berlin slot belongs to the previous UTC day: 23:00Z before the switch, 22:00Z after it.
    expect(parsed.rows.map((r) => [r.day, r.free_slots, r.free_minutes])).toEqual([
      ['2026-03-27', 1, 60],
      ['2026-03-28', 2, 120],
      ['2026-03-29', 3, 180],
      ['2026-03-30', 2, 120],
    ]);
    expect(parsed.summary).toEqual({ free_slots: 8, free_minutes: 480 });
  });

  it('--from/--to bound local days; an empty selection says so plainly', async () => {
    const bounded = await slotfeed(
      'report',
      'availability',
      '--connection',
      berlin,
      '--at',
      T3,
      '--from',
      '2026-03-31',
      '--to',
      '2026-04-01',
      '--format',
      'csv',
    );
    expect(csvRows(bounded.stdout).map((r) => r[4])).toEqual(['day', '2026-03-31', '2026-04-01']);
    const empty = await slotfeed(
      'report',
      'availability',
      '--connection',
      berlin,
      '--at',
      T3,
      '--from',
      '2026-05-01',
    );
    expect(empty.code).toBe(0);
    expect(empty.stdout).toContain(`No free slots as of Mon 30 Mar 2026, 06:00 UTC for this selection.`);
  });
});

describe('bookings', () => {
  const at = '2026-03-30T07:00:00Z';
  it('per day: bookings by the day they went, lead times, newly opened slots (table)', async () => {
    const table = await slotfeed('report', 'bookings', '--connection', berlin, '--at', at);
    expect(table.code).toBe(0);
    const lines = table.stdout.split('\n').slice(1);
    const cells = (line: string | undefined) => (line ?? '').split(/\s{2,}/);
    expect(cells(lines[0])).toEqual([
      'connection',
      'day',
      'bookings',
      'booked minutes',
      'median lead (h)',
      'mean lead (h)',
      'opened slots',
    ]);
    expect(lines.slice(2, 5).map(cells)).toEqual([
      [email, '2026-03-27', '1', '60', '15.0', '15.0', '0'],
      [email, '2026-03-28', '3', '180', '21.0', '22.0', '3'],
      [email, '2026-03-30', '0', '0', '—', '—', '6'],
    ]);
    expect(table.stdout).toContain(
      'bookings: 4\nbooked minutes: 240\nmedian lead time (hours): 18.0\nbusiest weekday: Sun\nbusiest hour: 00:00\n' +
        'opened slots: 9\n',
    );
  });

  it('per week (CSV) and by weekday and hour of the booked time (JSON)', async () => {
    const csv = await slotfeed(
      'report',
      'bookings',
      '--connection',
      berlin,
      '--at',
      at,
      '--by',
      'week',
      '--format',
      'csv',
    );
    expect(csvRows(csv.stdout)).toEqual([
      [
        'connection_id',
        'connection',
        'week',
        'bookings',
        'booked_minutes',
        'median_lead_hours',
        'mean_lead_hours',
        'opened',
      ],
      [berlin, email, '2026-03-23', '4', '240', '18', '20.25', '3'],
      [berlin, email, '2026-03-30', '0', '0', '', '', '6'],
    ]);
    const json = await slotfeed(
      'report',
      'bookings',
      '--connection',
      berlin,
      '--at',
      at,
      '--by',
      'weekday-hour',
      '--format',
      'json',
    );
    const parsed = JSON.parse(json.stdout) as { rows: unknown[]; summary: unknown };
    expect(parsed.rows).toEqual([
      { weekday: 1, weekday_name: 'Mon', hour: 0, bookings: 1 },
      { weekday: 6, weekday_name: 'Sat', hour: 10, bookings: 1 },
      { weekday: 7, weekday_name: 'Sun', hour: 0, bookings: 1 },
      { weekday: 7, weekday_name: 'Sun', hour: 11, bookings: 1 },
    ]);
    expect(parsed.summary).toEqual({
      bookings: 4,
      booked_minutes: 240,
      median_lead_hours: 18,
      busiest_weekday: 'Sun',
      busiest_hour: '00:00',
    });
  });

  it('as of a past instant only counts what was gone by then', async () => {
    const json = await slotfeed(
      'report',
      'bookings',
      '--connection',
      berlin,
      '--at',
      '2026-03-28T00:00:00Z',
      '--format',
      'json',
    );
    const parsed = JSON.parse(json.stdout) as { rows: Record<string, unknown>[] };
    expect(parsed.rows.map((r) => [r.day, r.bookings, r.median_lead_hours, r.opened])).toEqual([
      ['2026-03-27', 1, 15, 0],
    ]);
  });
});

describe('utilization', () => {
  it('past days: booked ÷ offered time (table, CSV, JSON)', async () => {
    const at = '2026-03-30T07:00:00Z';
    const table = await slotfeed('report', 'utilization', '--connection', berlin, '--at', at);
    const body = table.stdout
      .split('\n')
      .slice(3, 5)
      .map((l) => l.split(/\s{2,}/));
    expect(body).toEqual([
      [email, '2026-03-28', '180', '1', '60', '33.3 %'],
      [email, '2026-03-29', '180', '2', '120', '66.7 %'],
    ]);
    expect(table.stdout).toContain(
      'offered minutes: 360\nbookings: 3\nbooked minutes: 180\nbooked share: 50.0 %\n',
    );
    const csv = await slotfeed(
      'report',
      'utilization',
      '--connection',
      berlin,
      '--at',
      at,
      '--format',
      'csv',
    );
    expect(csvRows(csv.stdout).map((r) => r.slice(2))).toEqual([
      ['day', 'offered_minutes', 'bookings', 'booked_minutes', 'share'],
      ['2026-03-28', '180', '1', '60', '0.3333'],
      ['2026-03-29', '180', '2', '120', '0.6667'],
    ]);
    // As of Mar 29 noon, only Mar 28 is past.
    const json = await slotfeed(
      'report',
      'utilization',
      '--connection',
      berlin,
      '--at',
      '2026-03-29T12:00:00Z',
      '--format',
      'json',
    );
    expect((JSON.parse(json.stdout) as { summary: unknown }).summary).toEqual({
      offered_minutes: 180,
      bookings: 1,
      booked_minutes: 60,
      share: 0.3333,
    });
  });
});

describe('sync-health', () => {
  it('runs, success rate, calls per run, last error and re-authorisation (JSON and table)', async () => {
    const json = await slotfeed('report', 'sync-health', '--at', '2026-03-30T07:00:00Z', '--format', 'json');
    const parsed = JSON.parse(json.stdout) as {
      rows: Record<string, unknown>[];
      summary: Record<string, unknown>;
    };
    const byId = new Map(parsed.rows.map((r) => [r.connection_id, r]));
    expect(byId.get(berlin)).toMatchObject({
      status: 'active',
      needs_reauth: false,
      runs: 4,
      success_rate: 1,
      median_seconds: 0,
      p95_seconds: 0,
      last_error: null,
    });
    // /users/me, /events, one overview window per band (the 7-day horizon spans 0-3d and 3-7d), the slots
    // of each date with slots (3, 3, 3, 4), and from sync 2 on a token refresh (the 3-hour access token has
    // expired by then).
    const calls = await k.h.db.prisma.syncRun.findMany({
      where: { connectionId: berlin },
      orderBy: { startedAt: 'asc' },
    });
    expect(calls.map((r) => r.upstreamCalls)).toEqual([7, 8, 8, 9]);
    expect(byId.get(berlin)?.calls_per_run).toBe(8);
    // How stale its changes may have been, by how far ahead: each change counts with its run's gap since
    // the previous successful sync (T0→T1 6 h, T1→T2 18 h, T2→T3 42 h). Within 24 h: the booking seen at T1
    // and the two seen at T2 (p95 over them is the 18 h gap); 1–3 days: the 03-29 22:00 booking seen at T2,
    // and the dates that opened as the 3-day booking limit moved on, at T2 and T3.
    expect(byId.get(berlin)).toMatchObject({
      stale_p95_0_24h: 18 * 3600,
      stale_p95_1_3d: 42 * 3600,
      stale_p95_3_7d: 42 * 3600,
      stale_p95_7d: null,
    });
    const ny = byId.get(k.newYork.connectionId);
    expect(ny).toMatchObject({
      status: 'needs_reauth',
      needs_reauth: true,
      runs: 2,
      success_rate: 0.5,
      last_error_at: T3,
    });
    expect(String(ny?.last_error)).toMatch(/^needs_reauth: .*invalid_grant/);
    expect(parsed.summary).toEqual({ needs_reauth: k.newYork.email });

    const table = await slotfeed('report', 'sync-health', '--at', '2026-03-30T07:00:00Z');
    expect(table.stdout).toContain(`needing re-authorisation: ${k.newYork.email}\n`);
    // The table reads staleness in the unit that fits it; CSV and JSON keep seconds.
    expect(table.stdout).toMatch(/\bstale 0-24h p95\s+stale 1-3d p95\b/);
    expect(table.stdout).toMatch(/\b18 h\s+42 h\b/);
  });

  it('median and p95 duration are interpolated percentiles over the selected runs', async () => {
    const id = randomUUID();
    await k.h.db.prisma.connection.create({
      data: {
        id,
        upstreamUserId: 'usr_durations',
        email: 'zz-durations@example.test',
        timezone: 'Asia/Kolkata',
      },
    });
    const start = Date.parse('2026-03-10T00:00:00Z');
    await k.h.db.prisma.syncRun.createMany({
      data: Array.from({ length: 10 }, (_, i) => ({
        connectionId: id,
        startedAt: new Date(start + i * 3_600_000),
        finishedAt: new Date(start + i * 3_600_000 + (i + 1) * 1000),
        outcome: i === 9 ? ('failed' as const) : ('succeeded' as const),
        errorCode: i === 9 ? 'upstream_5xx' : null,
        errorMessage: i === 9 ? 'GET /events answered 503' : null,
        upstreamCalls: i < 5 ? 10 : 20,
      })),
    });
    const csv = await slotfeed('report', 'sync-health', '--connection', id, '--at', T3, '--format', 'csv');
    expect(csvRows(csv.stdout)).toEqual([
      [
        'connection_id',
        'connection',
        'status',
        'needs_reauth',
        'runs',
        'success_rate',
        'superseded',
        'interrupted',
        'median_seconds',
        'p95_seconds',
        'calls_per_run',
        'stale_p95_0_24h',
        'stale_p95_1_3d',
        'stale_p95_3_7d',
        'stale_p95_7d',
        'last_error_at',
        'last_error',
      ],
      [
        id,
        'zz-durations@example.test',
        'active',
        'false',
        '10',
        '0.9',
        '0',
        '0',
        '5.5',
        '9.55',
        '15',
        '',
        '',
        '',
        '',
        '2026-03-10T09:00:00.000Z',
        'upstream_5xx: GET /events answered 503',
      ],
    ]);
    // Local days in Asia/Kolkata (UTC+05:30): runs from 18:30Z on belong to Mar 11; none of these do.
    const day = await slotfeed(
      'report',
      'sync-health',
      '--connection',
      id,
      '--at',
      T3,
      '--from',
      '2026-03-11',
      '--format',
      'json',
    );
    expect((JSON.parse(day.stdout) as { rows: Record<string, unknown>[] }).rows[0]).toMatchObject({
      runs: 0,
      success_rate: null,
      median_seconds: null,
    });
  });
});

describe('usage errors', () => {
  it('exit 2 for bad flags, with a message that says what to give', async () => {
    const cases: [string[], RegExp][] = [
      [
        ['report', 'availability', '--from', '2026-03-05', '--to', '2026-03-01'],
        /--from 2026-03-05 is after --to 2026-03-01: swap them/,
      ],
      [
        ['report', 'bookings', '--from', '2026-02-30'],
        /--from "2026-02-30" is not a date: give a day as YYYY-MM-DD/,
      ],
      [
        ['report', 'availability', '--at', 'yesterday'],
        /--at "yesterday" is not an instant: give a date-time with its offset/,
      ],
      [['report', 'availability', '--at', '2026-03-01T12:00:00'], /is not an instant/],
      [['report', 'utilization', '--tz', 'Mars/Olympus'], /--tz "Mars\/Olympus" is not a time zone/],
      [
        ['report', 'availability', '--connection', 'nope'],
        /not a connection id: `slotfeed connections list` shows them/,
      ],
      [['report', 'availability', '--format', 'xml'], /Allowed choices are table, csv, json/],
      [['report', 'sync-health', '--event', 'evt_x'], /unknown option '--event'/],
      [['report', 'nonsense'], /unknown command 'nonsense'/],
    ];
    for (const [args, message] of cases) {
      const result = await slotfeed(...args);
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toMatch(message);
    }
  });

  it('exit 1 for an unknown connection or event type, saying where the ids are', async () => {
    const unknown = await slotfeed('report', 'availability', '--connection', randomUUID());
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no connection with id .*: `slotfeed connections list` shows the ids/);
    const event = await slotfeed('report', 'bookings', '--connection', berlin, '--event', 'evt_missing');
    expect(event.code).toBe(1);
    expect(event.stderr).toMatch(/no event type evt_missing for connection/);
  });

  it('--help on the report commands', async () => {
    const help = await slotfeed('report', 'bookings', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--by <grouping>/);
    expect(help.stdout).toMatch(/--at <instant>/);
  });
});

describe('slotfeed connections', () => {
  it('lists, shows, disables and enables', async () => {
    const list = await slotfeed('connections', 'list');
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(berlin);
    expect(list.stdout).toMatch(
      new RegExp(`${k.newYork.connectionId}\\s+${k.newYork.email}\\s+needs_reauth`),
    );
    const show = await slotfeed('connections', 'show', berlin);
    expect(show.stdout).toContain('time zone   Europe/Berlin');
    expect(show.stdout).toContain(`  ${k.berlin.eventId}  Intro call\n`);
    // Two unnamed feeds of all event types, titled apart as /me titles them (feed-title.ts).
    const made = (options: FeedOptions) =>
      k.h.stores.feeds.create({ connectionId: berlin, upstreamEventId: null, label: null, options });
    const { feed: free } = await made({ view: 'free' });
    const { feed: slots } = await made({ view: 'slots', days: 7 });
    const titled = (await slotfeed('connections', 'show', berlin)).stdout;
    expect(titled).toContain(`  ${free.id}  All event types: free time  since `);
    expect(titled).toContain(`  ${slots.id}  All event types: slots, 7 days  since `);
    // A feed of an event type no longer listed is named by its id, which an operator can look up.
    const { feed: gone } = await k.h.stores.feeds.create({
      connectionId: berlin,
      upstreamEventId: 'evt_gone',
      label: null,
      options: { view: 'free' },
    });
    expect((await slotfeed('connections', 'show', berlin)).stdout).toContain(
      `  ${gone.id}  evt_gone: free time  since `,
    );
    expect((await slotfeed('connections', 'disable', berlin)).stdout).toMatch(/disabled: no more syncs/);
    expect((await slotfeed('connections', 'disable', berlin)).stdout).toMatch(
      /Nothing changed: .* is disabled/,
    );
    expect((await slotfeed('connections', 'enable', berlin)).stdout).toMatch(/enabled/);
    const missing = await slotfeed('connections', 'show', randomUUID());
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no connection with id/);
    expect((await slotfeed('connections', 'enable', 'nope')).code).toBe(2);
  });
});
