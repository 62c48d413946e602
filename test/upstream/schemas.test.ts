import { describe, expect, it } from '@jest/globals';
import { UpstreamInvalidPayloadError } from '../../src/upstream/errors.js';
import { formatIssuePath, parsePayload } from '../../src/upstream/payload-check.js';
import {
  eventTypeListSchema,
  overviewSchema,
  profileSchema,
  slotListSchema,
  tokenResponseSchema,
} from '../../src/upstream/schemas.js';
import type { z } from 'zod';

const source = { endpoint: 'GET /test', status: 200 };

/** The path of the first violation, as the client reports it. */
function violationPath(schema: z.ZodType, data: unknown): string {
  try {
    parsePayload(schema, data, source);
  } catch (e: unknown) {
    if (e instanceof UpstreamInvalidPayloadError) return e.path;
    throw e;
  }
  throw new Error('payload was accepted');
}

const eventType = () => ({
  event_id: 'ev-1',
  title: '30 min call',
  booking_type: 'single',
  color: '#336699',
  description: 'A call',
  duration_minutes: 30,
  enabled: true,
  is_team: false,
  location: { type: 'video', value: 'https://meet.example/abc' },
  buffer_after_minutes: 5,
  buffer_before_minutes: 0,
  is_secret: false,
  redirect_url: '',
  url: 'https://book.example/ev-1',
});

const overview = () => ({
  timezone: 'Europe/Berlin',
  availability: {
    disabled_dates: { days: ['2026-03-10'], months: [8] },
    first_available_date: '2026-03-02',
    weekly: { week_days: { mon: true, tue: true, wed: true, thu: true, fri: true, sat: false, sun: false } },
    last_available_date: '2026-04-30',
    available_dates: ['2026-03-02', '2026-03-03'],
  },
});

describe('event type list', () => {
  it('accepts the documented shape and drops unknown fields', () => {
    const [parsed] = eventTypeListSchema.parse([{ ...eventType(), brand_new_field: 1 }]);
    expect(parsed).toEqual(eventType());
  });

  it('lets cosmetic fields be missing or null, normalised to null', () => {
    const { event_id, title, duration_minutes, enabled } = eventType();
    const [parsed] = eventTypeListSchema.parse([{ event_id, title, duration_minutes, enabled, color: null }]);
    expect(parsed).toMatchObject({
      color: null,
      description: null,
      location: null,
      url: null,
      is_secret: null,
    });
  });

  it.each([
    ['event_id missing', (e: Record<string, unknown>) => delete e.event_id, '[0].event_id'],
    ['title missing', (e: Record<string, unknown>) => delete e.title, '[0].title'],
    ['enabled not boolean', (e: Record<string, unknown>) => (e.enabled = 'yes'), '[0].enabled'],
    ['duration zero', (e: Record<string, unknown>) => (e.duration_minutes = 0), '[0].duration_minutes'],
    [
      'duration over a day',
      (e: Record<string, unknown>) => (e.duration_minutes = 1441),
      '[0].duration_minutes',
    ],
    [
      'duration a string',
      (e: Record<string, unknown>) => (e.duration_minutes = '30min'),
      '[0].duration_minutes',
    ],
    [
      'duration fractional',
      (e: Record<string, unknown>) => (e.duration_minutes = 7.5),
      '[0].duration_minutes',
    ],
    [
      'negative buffer',
      (e: Record<string, unknown>) => (e.buffer_after_minutes = -1),
      '[0].buffer_after_minutes',
    ],
    [
      'location without type',
      (e: Record<string, unknown>) => (e.location = { value: 'x' }),
      '[0].location.type',
    ],
  ])('rejects %s', (_label, mutate, path) => {
    const e: Record<string, unknown> = eventType();
    mutate(e);
    expect(violationPath(eventTypeListSchema, [e])).toBe(path);
  });

  it('rejects a wrapped list', () => {
    expect(violationPath(eventTypeListSchema, { events: [eventType()] })).toBe('(root)');
  });
});

describe('profile', () => {
  const profile = () => ({
    name: 'Ada',
    email: 'ada@example.test',
    avatar: 'https://img.example/ada.png',
    language: 'en',
    timezone: 'America/New_York',
    notification_settings: {
      guest_notification_broker: 'email',
      notification_broker: 'email',
      pending_actions: 'x',
    },
  });

  it('accepts the documented shape and missing cosmetic fields', () => {
    expect(profileSchema.parse(profile())).toEqual(profile());
    const { name, email, timezone } = profile();
    expect(profileSchema.parse({ name, email, timezone })).toEqual({
      name,
      email,
      timezone,
      avatar: null,
      language: null,
      notification_settings: null,
    });
  });

  it.each([
    ['email null', { email: null }, 'email'],
    ['email without @', { email: 'ada' }, 'email'],
    ['timezone a number', { timezone: 60 }, 'timezone'],
    ['timezone not IANA', { timezone: 'Mars/Olympus' }, 'timezone'],
    ['timezone an offset', { timezone: '+01:00' }, 'timezone'],
    ['notification_settings a string', { notification_settings: 'email' }, 'notification_settings'],
  ])('rejects %s', (_label, patch, path) => {
    expect(violationPath(profileSchema, { ...profile(), ...patch })).toBe(path);
  });
});

describe('overview', () => {
  it('accepts the documented shape', () => {
    expect(overviewSchema.parse(overview())).toEqual(overview());
  });

  it('accepts months as numbers or numeric strings, kept as sent', () => {
    const o = overview();
    const raw = {
      ...o,
      availability: { ...o.availability, disabled_dates: { days: [], months: ['8', 12, '01'] } },
    };
    expect(overviewSchema.parse(raw)).toEqual(raw);
  });

  it.each([
    ['with Z', '2026-03-04T23:00:00Z'],
    ['with an offset', '2026-03-05T00:00:00+01:00'],
    ['without an offset', '2026-03-05T00:00:00'],
    ['without seconds or offset', '2026-03-05T00:00'],
  ])('accepts first/last dates as date-times %s, kept as sent', (_label, dateTime) => {
    const o = overview();
    const raw = {
      ...o,
      availability: { ...o.availability, first_available_date: dateTime, last_available_date: dateTime },
    };
    expect(overviewSchema.parse(raw)).toEqual(raw);
  });

  it('lets every field the sync does not read be null or missing, kept as sent', () => {
    const o = overview();
    const nulls = {
      ...o,
      availability: {
        available_dates: o.availability.available_dates,
        first_available_date: null,
        last_available_date: null,
        disabled_dates: { days: null, months: null },
        weekly: { week_days: { ...o.availability.weekly.week_days, sat: null } },
      },
    };
    expect(overviewSchema.parse(nulls)).toEqual(nulls);
    const bare = { timezone: o.timezone, availability: { available_dates: o.availability.available_dates } };
    expect(overviewSchema.parse(bare)).toEqual(bare);
    const nullObjects = {
      ...bare,
      availability: { ...bare.availability, disabled_dates: null, weekly: null },
    };
    expect(overviewSchema.parse(nullObjects)).toEqual(nullObjects);
  });

  it('drops unknown fields', () => {
    const o = overview();
    const raw = { ...o, brand_new: 1, availability: { ...o.availability, also_new: true } };
    expect(overviewSchema.parse(raw)).toEqual(o);
  });

  it.each<[string, (a: Record<string, unknown>, d: Record<string, unknown>) => void, string]>([
    ['month 13', (_a, d) => (d.months = [13]), 'availability.disabled_dates.months[0]'],
    ['month 0 as string', (_a, d) => (d.months = [8, '0']), 'availability.disabled_dates.months[1]'],
    ['month name', (_a, d) => (d.months = ['August']), 'availability.disabled_dates.months[0]'],
    ['month 8.5', (_a, d) => (d.months = [8.5]), 'availability.disabled_dates.months[0]'],
    ['month boolean', (_a, d) => (d.months = [true]), 'availability.disabled_dates.months[0]'],
    ['impossible disabled day', (_a, d) => (d.days = ['2026-02-30']), 'availability.disabled_dates.days[0]'],
    [
      'available_dates joined',
      (a) => (a.available_dates = '2026-03-02,2026-03-03'),
      'availability.available_dates',
    ],
    [
      'available date with time',
      (a) => (a.available_dates = ['2026-03-02T00:00:00Z']),
      'availability.available_dates[0]',
    ],
    ['available_dates missing', (a) => delete a.available_dates, 'availability.available_dates'],
    ['available_dates null', (a) => (a.available_dates = null), 'availability.available_dates'],
    ['first date a number', (a) => (a.first_available_date = 20260302), 'availability.first_available_date'],
    ['first date empty', (a) => (a.first_available_date = ''), 'availability.first_available_date'],
    [
      'first date impossible',
      (a) => (a.first_available_date = '2026-02-29T09:00:00Z'),
      'availability.first_available_date',
    ],
    ['last date garbage', (a) => (a.last_available_date = 'tomorrow'), 'availability.last_available_date'],
    [
      'last date with hour 24',
      (a) => (a.last_available_date = '2026-04-30T24:00:00'),
      'availability.last_available_date',
    ],
    ['disabled days a string', (_a, d) => (d.days = '2026-03-10'), 'availability.disabled_dates.days'],
    [
      'week_days as array',
      (a) => (a.weekly = { week_days: ['mon', 'tue'] }),
      'availability.weekly.week_days',
    ],
    [
      'week day a string',
      (a) => (a.weekly = { week_days: { mon: 'yes' } }),
      'availability.weekly.week_days.mon',
    ],
  ])('rejects %s with the path of the first violation', (_label, mutate, path) => {
    const o = overview();
    const availability: Record<string, unknown> = {
      ...o.availability,
      disabled_dates: { ...o.availability.disabled_dates },
    };
    mutate(availability, availability.disabled_dates as Record<string, unknown>);
    expect(violationPath(overviewSchema, { ...o, availability })).toBe(path);
  });

  it('rejects availability null and an invalid zone', () => {
    expect(violationPath(overviewSchema, { ...overview(), availability: null })).toBe('availability');
    expect(violationPath(overviewSchema, { ...overview(), timezone: 'CET+1' })).toBe('timezone');
  });
});

describe('slot list', () => {
  it('normalises keys to sorted instants with milliseconds and merges two spellings of one instant', () => {
    const parsed = slotListSchema.parse({
      timezone: 'Europe/Berlin',
      booking_type: 'single',
      slot_list: { '2026-03-02T10:00:00Z': {}, '2026-03-02T09:30:00.000Z': {}, '2026-03-02T09:30:00Z': {} },
    });
    expect(parsed).toEqual({
      timezone: 'Europe/Berlin',
      booking_type: 'single',
      starts: ['2026-03-02T09:30:00.000Z', '2026-03-02T10:00:00.000Z'],
    });
  });

  it('accepts an empty day', () => {
    expect(slotListSchema.parse({ timezone: 'UTC', booking_type: 'x', slot_list: {} }).starts).toEqual([]);
  });

  it.each([
    ['an offset instead of Z', { '2026-03-02T10:00:00+01:00': {} }, 'slot_list["2026-03-02T10:00:00+01:00"]'],
    ['a wall-clock time', { '09:00': {} }, 'slot_list["09:00"]'],
    ['not a time', { 'not-a-time': {} }, 'slot_list["not-a-time"]'],
    ['an impossible date', { '2026-02-30T09:00:00Z': {} }, 'slot_list["2026-02-30T09:00:00Z"]'],
    ['hour 24', { '2026-03-02T24:00:00Z': {} }, 'slot_list["2026-03-02T24:00:00Z"]'],
    ['a value that is not an object', { '2026-03-02T09:00:00Z': true }, 'slot_list["2026-03-02T09:00:00Z"]'],
  ])('rejects %s', (_label, slotList, path) => {
    expect(violationPath(slotListSchema, { timezone: 'UTC', booking_type: 'x', slot_list: slotList })).toBe(
      path,
    );
  });

  it('rejects slot_list as an array', () => {
    const raw = { timezone: 'UTC', booking_type: 'x', slot_list: ['2026-03-02T09:00:00Z'] };
    expect(violationPath(slotListSchema, raw)).toBe('slot_list');
  });
});

describe('token response', () => {
  it('accepts a minimal response and a case-insensitive Bearer', () => {
    const minimal = tokenResponseSchema.parse({ access_token: 'a', token_type: 'bearer' });
    expect(minimal.access_token).toBe('a');
    expect(minimal.expires_in).toBeUndefined();
    expect(minimal.refresh_token).toBeUndefined();
    expect(
      tokenResponseSchema.parse({ access_token: 'a', token_type: 'BEARER', refresh_token: null })
        .refresh_token,
    ).toBeUndefined();
  });

  it.each([
    ['access_token missing', { token_type: 'Bearer' }, 'access_token'],
    ['token_type mac', { access_token: 'a', token_type: 'mac' }, 'token_type'],
    ['expires_in zero', { access_token: 'a', token_type: 'Bearer', expires_in: 0 }, 'expires_in'],
    ['expires_in a string', { access_token: 'a', token_type: 'Bearer', expires_in: '3600' }, 'expires_in'],
  ])('rejects %s', (_label, raw, path) => {
    expect(violationPath(tokenResponseSchema, raw)).toBe(path);
  });

  it('does not echo a token in the invalid_payload message', () => {
    const raw = { access_token: 'SECRET-access-1', refresh_token: 42, token_type: 'Bearer' };
    expect(() => parsePayload(tokenResponseSchema, raw, source)).toThrow(UpstreamInvalidPayloadError);
    try {
      parsePayload(
        tokenResponseSchema,
        { ...raw, refresh_token: 'SECRET-refresh-1', token_type: 'mac' },
        source,
      );
    } catch (e: unknown) {
      expect(String(e)).not.toContain('SECRET');
      expect((e as UpstreamInvalidPayloadError).path).toBe('token_type');
    }
    expect.assertions(3);
  });
});

describe('formatIssuePath', () => {
  it('writes indexes in brackets and odd keys quoted', () => {
    expect(formatIssuePath(['availability', 'disabled_dates', 'months', 0])).toBe(
      'availability.disabled_dates.months[0]',
    );
    expect(formatIssuePath([3, 'title'])).toBe('[3].title');
    expect(formatIssuePath(['slot_list', 'a.b'])).toBe('slot_list["a.b"]');
    expect(formatIssuePath([])).toBe('(root)');
  });
});
