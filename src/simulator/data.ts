// Deterministic simulated accounts: the same seed (and start clock) always yields the same users.
import { DateTime } from 'luxon';
import type { Prng } from './prng.js';
import type { EventTypePayload, SimEventType, SimUser, WeeklyHours } from './types.js';

// The first five zones are fixed because they are the awkward ones: DST in both hemispheres' styles,
// half-hour and 30-minute-DST offsets. Tests and the demo rely on user i having zone i.
const FIXED_ZONES = [
  'Europe/Berlin',
  'America/New_York',
  'Asia/Kolkata',
  'America/St_Johns',
  'Australia/Lord_Howe',
] as const;
const OTHER_ZONES = [
  'Europe/London',
  'America/Los_Angeles',
  'Asia/Tokyo',
  'Pacific/Chatham',
  'America/Sao_Paulo',
  'UTC',
  'Asia/Kathmandu',
  'Australia/Adelaide',
] as const;

const FIRST_NAMES = ['Ada', 'Grace', 'Alan', 'Katherine', 'Edsger', 'Barbara', 'Donald', 'Margaret', 'Linus'];
const LAST_NAMES = ['Lovelace', 'Hopper', 'Turing', 'Johnson', 'Dijkstra', 'Liskov', 'Knuth', 'Hamilton'];
const LANGUAGES = ['en', 'de', 'hi', 'fr', 'pt', 'ja'];
const BOOKING_TYPES = ['one_on_one', 'group', 'collective', 'round_robin'];
const DURATIONS = [15, 20, 25, 30, 45, 50, 60, 75, 90, 120];
const BUFFERS = [0, 5, 10, 15];
const HORIZONS = [14, 30, 60, 90];
const LOCATIONS = [
  { type: 'zoom', value: 'https://zoom.example.test/j/123456789' },
  { type: 'google_meet', value: 'https://meet.example.test/abc-defg-hij' },
  { type: 'phone', value: '+1 555 0100' },
  { type: 'in_person', value: 'Main Street 1, Springfield' },
  { type: 'custom', value: 'We will send a link' },
];
const TITLES = ['Intro call', 'Deep dive', 'Office hours', 'Mentoring', 'Demo', 'Quick sync', 'Workshop'];

const range = (start: string, end: string) => ({ start, end });
const emptyWeek = (): WeeklyHours => ({ mon: [], tue: [], wed: [], thu: [], fri: [], sat: [], sun: [] });
const week = (days: (keyof WeeklyHours)[], ranges: { start: string; end: string }[]): WeeklyHours => {
  const hours = emptyWeek();
  for (const day of days) hours[day] = ranges.map((r) => ({ ...r }));
  return hours;
};
const WEEKDAYS_ONLY: (keyof WeeklyHours)[] = ['mon', 'tue', 'wed', 'thu', 'fri'];

/** Weekly templates; index 1 is the late shift that crosses midnight UTC for a zone west of UTC. */
const HOUR_TEMPLATES: (() => WeeklyHours)[] = [
  () => week(WEEKDAYS_ONLY, [range('09:00', '12:00'), range('13:00', '17:00')]),
  () => week(['tue', 'wed', 'thu', 'fri', 'sat'], [range('15:00', '23:00')]),
  () => week(WEEKDAYS_ONLY, [range('10:00', '13:00'), range('14:00', '18:30')]),
  () => week([...WEEKDAYS_ONLY, 'sat'], [range('08:30', '12:30')]),
  () => week(['mon', 'wed', 'fri'], [range('08:00', '11:00'), range('13:30', '16:00')]),
];

interface Owner {
  name: string;
  slug: string;
}

const slugify = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

function eventTypeFor(prng: Prng, owner: Owner, title: string, index: number): SimEventType {
  const payload: EventTypePayload = {
    event_id: `evt_${prng.idChars(12)}`,
    title,
    booking_type: index === 0 ? 'one_on_one' : prng.pick(BOOKING_TYPES),
    color: `#${prng.intBetween(0, 0xffffff).toString(16).padStart(6, '0')}`,
    description: `${title} with ${owner.name}`,
    duration_minutes: prng.pick(DURATIONS),
    enabled: true,
    is_team: prng.chance(0.2),
    location: { ...prng.pick(LOCATIONS) },
    buffer_after_minutes: prng.pick(BUFFERS),
    buffer_before_minutes: prng.pick(BUFFERS),
    is_secret: false,
    redirect_url: prng.chance(0.5) ? `https://example.test/thanks/${slugify(title)}` : '',
    url: `https://book.calendbook.test/${owner.slug}/${slugify(title)}-${index + 1}`,
  };
  return { payload, maxDaysAhead: prng.pick(HORIZONS) };
}

/** `exactly` types, all enabled and public: a fixed shape for benchmarks, drawn from the same distributions. */
function uniformEventTypes(prng: Prng, owner: Owner, exactly: number): SimEventType[] {
  return Array.from({ length: exactly }, (_, i) =>
    eventTypeFor(prng, owner, TITLES[i % TITLES.length] ?? 'Meeting', i),
  );
}

function eventTypesFor(prng: Prng, userIndex: number, owner: Owner, exactly?: number): SimEventType[] {
  if (exactly !== undefined) return uniformEventTypes(prng, owner, exactly);
  if (userIndex === 0) {
    // User 0 is the one tests lean on: a plain enabled type, a buffered one, a secret one, a disabled one.
    const intro = eventTypeFor(prng, owner, 'Intro call', 0);
    Object.assign(intro.payload, { duration_minutes: 30, buffer_before_minutes: 0, buffer_after_minutes: 0 });
    intro.maxDaysAhead = 60;
    const deep = eventTypeFor(prng, owner, 'Deep dive', 1);
    Object.assign(deep.payload, {
      duration_minutes: 60,
      buffer_before_minutes: 10,
      buffer_after_minutes: 15,
    });
    deep.maxDaysAhead = 60;
    const secret = eventTypeFor(prng, owner, 'Private 1:1', 2);
    Object.assign(secret.payload, { duration_minutes: 45, is_secret: true });
    const retired = eventTypeFor(prng, owner, 'Old workshop', 3);
    Object.assign(retired.payload, { duration_minutes: 90, enabled: false });
    return [intro, deep, secret, retired];
  }
  const count = prng.intBetween(1, 6);
  const types: SimEventType[] = [];
  for (let i = 0; i < count; i++) {
    const type = eventTypeFor(prng, owner, TITLES[i % TITLES.length] ?? 'Meeting', i);
    if (i > 0 && prng.chance(0.15)) type.payload.enabled = false;
    if (i > 0 && prng.chance(0.15)) type.payload.is_secret = true;
    types.push(type);
  }
  return types;
}

/** Public holidays of the start year and the next one, plus two seeded dates in the coming weeks. */
function disabledDaysFor(prng: Prng, timezone: string, startMs: number): string[] {
  const today = DateTime.fromMillis(startMs, { zone: timezone }).startOf('day');
  const days = new Set<string>();
  for (const year of [today.year, today.year + 1]) {
    days.add(`${year}-01-01`);
    days.add(`${year}-12-25`);
  }
  days.add(today.plus({ days: prng.intBetween(3, 12) }).toISODate() ?? '');
  days.add(today.plus({ days: prng.intBetween(13, 40) }).toISODate() ?? '');
  days.delete('');
  return [...days].sort();
}

/**
 * The first OPEN_ALL_YEAR users (the three the demo connects, and the ones tests lean on) never have a whole
 * month off: a demo started in any month shows free time. A later user may have one. Users 1 and 2 still draw,
 * so that every value drawn after theirs (later users, bookings) is what the same seed always gave.
 */
const OPEN_ALL_YEAR = 3;
function disabledMonthsFor(prng: Prng, userIndex: number): number[] {
  if (userIndex === 0) return [];
  const drawn = prng.pick([[], [], [12], [1, 8]]);
  return userIndex < OPEN_ALL_YEAR ? [] : drawn;
}

export interface GenerateUsersOptions {
  /** Exactly this many enabled event types per user (see SimulatorOptions.eventTypesPerUser). */
  eventTypesPerUser?: number;
}

export function generateUsers(
  prng: Prng,
  count: number,
  startMs: number,
  options: GenerateUsersOptions = {},
): SimUser[] {
  const perUser = options.eventTypesPerUser;
  if (perUser !== undefined && (!Number.isInteger(perUser) || perUser < 1 || perUser > 50)) {
    throw new RangeError(`eventTypesPerUser must be an integer 1–50, got ${perUser}`);
  }
  const users: SimUser[] = [];
  const emails = new Set<string>();
  for (let i = 0; i < count; i++) {
    const first = prng.pick(FIRST_NAMES);
    const last = prng.pick(LAST_NAMES);
    let email = `${first}.${last}@example.test`.toLowerCase();
    for (let n = 2; emails.has(email); n++) email = `${first}.${last}${n}@example.test`.toLowerCase();
    emails.add(email);
    const id = `usr_${prng.idChars(10)}`;
    const timezone = FIXED_ZONES[i] ?? prng.pick(OTHER_ZONES);
    const userSlug = email.split('@')[0]?.replace('.', '-') ?? id;
    const template =
      HOUR_TEMPLATES[i < HOUR_TEMPLATES.length ? i : prng.intBetween(0, HOUR_TEMPLATES.length - 1)];
    users.push({
      id,
      profile: {
        name: `${first} ${last}`,
        email,
        avatar: `https://avatars.calendbook.test/${id}.png`,
        language: prng.pick(LANGUAGES),
        timezone,
        notification_settings: {
          guest_notification_broker: prng.pick(['email', 'sms']),
          notification_broker: prng.pick(['email', 'slack', 'webhook']),
          pending_actions: prng.pick(['email', 'none']),
        },
      },
      eventTypes: eventTypesFor(prng, i, { name: `${first} ${last}`, slug: userSlug }, perUser),
      weeklyHours: (template ?? HOUR_TEMPLATES[0]!)(),
      disabledDays: disabledDaysFor(prng, timezone, startMs),
      disabledMonths: disabledMonthsFor(prng, i),
      bookings: [],
    });
  }
  return users;
}
