import { z } from 'zod';
import { calendarDateIn, isCalendarDate, isIanaZone, normalisedUtcInstant } from './iso-values.js';

// Payload schemas of the scheduling service (seed §2). Policy for what the seed leaves open:
// - Unknown extra fields are allowed and dropped (z.object strips): services add fields without notice.
// - Core fields (the ones a sync or a feed needs) are required; cosmetic ones may be missing or null and
//   are normalised to null, so "absent" and "null" hash the same in the versioned snapshot rows. The
//   overview's unread fields are the exception: kept as sent (see overviewSchema).
// - Values are checked for meaning, not only type: dates exist, zones are IANA zones, slot keys are instants.

const calendarDate = z.string().refine(isCalendarDate, 'expected a calendar date YYYY-MM-DD');
const ianaZone = z.string().refine(isIanaZone, 'expected an IANA time zone name');
const cosmeticString = z.string().nullable().default(null);
const cosmeticBoolean = z.boolean().nullable().default(null);
const minutes = z.number().int().min(0);

// Seed §2.3: "array of string … declared with format number"; the service sends numbers or numeric
// strings ("8"). Both are months 1–12; they are kept as sent.
const monthNumber = z.union(
  [z.number().int().min(1).max(12), z.string().regex(/^(0?[1-9]|1[0-2])$/, 'expected a month number 1–12')],
  { error: 'expected a month 1–12 as a number or a numeric string' },
);

/** A field the sync does not read: it may be missing or null, and is kept as sent when it is there. */
const unread = <S extends z.ZodType>(schema: S) => schema.nullish();

/** Seed §2.1, one element of GET /events. */
export const eventTypeSchema = z.object({
  event_id: z.string().min(1),
  title: z.string(),
  duration_minutes: z.number().int().positive().max(1440),
  enabled: z.boolean(),
  booking_type: cosmeticString,
  color: cosmeticString,
  description: cosmeticString,
  is_team: cosmeticBoolean,
  is_secret: cosmeticBoolean,
  location: z.object({ type: z.string(), value: cosmeticString }).nullable().default(null),
  buffer_after_minutes: minutes.nullable().default(null),
  buffer_before_minutes: minutes.nullable().default(null),
  redirect_url: cosmeticString,
  url: cosmeticString,
});
// Two event types with one id would be pulled twice and their slots stored twice; the id is the key of
// everything downstream (overviews, slots, feeds), so such a list is refused rather than guessed at.
export const eventTypeListSchema = z.array(eventTypeSchema).superRefine((eventTypes, ctx) => {
  const seen = new Set<string>();
  eventTypes.forEach((eventType, index) => {
    if (seen.has(eventType.event_id)) {
      ctx.addIssue({
        code: 'custom',
        path: [index, 'event_id'],
        message: 'repeats the event_id of an earlier event type',
      });
    }
    seen.add(eventType.event_id);
  });
});
export type EventType = z.output<typeof eventTypeSchema>;

/**
 * Seed §2.2, GET /users/me. name, email and timezone are required (the connection's identity and zone
 * come from here). The e-mail check is deliberately loose: rejecting a sync over an unusual but
 * deliverable address would be worse than storing it.
 */
export const profileSchema = z.object({
  name: z.string(),
  email: z.string().regex(/^[^\s@]+@[^\s@]+$/, 'expected an e-mail address'),
  timezone: ianaZone,
  avatar: cosmeticString,
  language: cosmeticString,
  notification_settings: z
    .object({
      guest_notification_broker: cosmeticString,
      notification_broker: cosmeticString,
      pending_actions: cosmeticString,
    })
    .nullable()
    .default(null),
});
export type Profile = z.output<typeof profileSchema>;

// Seed §2.3 types first_available_date as a date-time and last_available_date as a date-time or null; the
// service is known to send plain dates, date-times with Z or an offset, date-times without one, and null.
const OVERVIEW_DATE_FIELDS = ['first_available_date', 'last_available_date'] as const;

/**
 * Seed §2.3, GET /calendars/{event_id}. Strict where the sync reads it: `timezone` (compared with the zone
 * asked for, in pull-snapshot) and `available_dates`, the dates whose slots are fetched. Lenient where it
 * does not: first/last dates, disabled dates and week days may be missing or null and take every spelling
 * the service is known to use. Nothing is transformed, so the snapshot keeps each value as the service
 * sent it (unknown fields are still dropped). What is there must still be one of those spellings: a
 * payload whose other parts are garbage is not one to trust for its available dates either.
 */
export const overviewSchema = z
  .object({
    timezone: ianaZone,
    availability: z.object({
      available_dates: z.array(calendarDate),
      first_available_date: unread(z.string()),
      last_available_date: unread(z.string()),
      disabled_dates: unread(
        z.object({ days: unread(z.array(calendarDate)), months: unread(z.array(monthNumber)) }),
      ),
      weekly: unread(
        z.object({
          week_days: unread(
            z.object({
              mon: unread(z.boolean()),
              tue: unread(z.boolean()),
              wed: unread(z.boolean()),
              thu: unread(z.boolean()),
              fri: unread(z.boolean()),
              sat: unread(z.boolean()),
              sun: unread(z.boolean()),
            }),
          ),
        }),
      ),
    }),
  })
  .superRefine((overview, ctx) => {
    // The dates are expressed in the overview's zone, so that is where a date-time is read. A bad zone
    // has its own issue already.
    if (!isIanaZone(overview.timezone)) return;
    for (const field of OVERVIEW_DATE_FIELDS) {
      const value = overview.availability[field];
      if (typeof value === 'string' && calendarDateIn(value, overview.timezone) === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['availability', field],
          message: 'expected a date YYYY-MM-DD or an ISO date-time, with or without an offset',
        });
      }
    }
  });
export type Overview = z.output<typeof overviewSchema>;

/**
 * Seed §2.4, GET /calendars/{event_id}/slots, normalised to `starts`: sorted, de-duplicated
 * `YYYY-MM-DDTHH:mm:ss.sssZ` strings (which sort chronologically as text).
 * Duplicates: JSON.parse already keeps only the last of two identical keys, so the only duplicates left
 * are two spellings of one instant ("…T09:00:00Z" and "…T09:00:00.000Z"). They are merged, not rejected:
 * the list is a set of bookable start times and both spellings say the same thing.
 */
export const slotListSchema = z
  .object({
    timezone: ianaZone,
    booking_type: cosmeticString,
    slot_list: z.record(z.string(), z.object({})),
  })
  .transform((raw, ctx) => {
    const starts = new Set<string>();
    for (const key of Object.keys(raw.slot_list)) {
      const instant = normalisedUtcInstant(key);
      if (instant === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['slot_list', key],
          message: 'expected an ISO 8601 UTC timestamp ending in Z',
        });
        return z.NEVER;
      }
      starts.add(instant);
    }
    return { timezone: raw.timezone, booking_type: raw.booking_type, starts: [...starts].sort() };
  });
export type SlotList = z.output<typeof slotListSchema>;

/**
 * RFC 6749 §5.1 token response. token_type must be Bearer (case-insensitive, §5.1 says so); optional
 * fields sent as null count as absent. Extra fields (id_token, …) are dropped.
 */
export const tokenResponseSchema = z.object({
  access_token: z.string().min(1),
  token_type: z.string().refine((v) => v.toLowerCase() === 'bearer', 'expected token_type Bearer'),
  expires_in: z
    .number()
    .positive()
    .nullish()
    .transform((v) => v ?? undefined),
  refresh_token: z
    .string()
    .min(1)
    .nullish()
    .transform((v) => v ?? undefined),
  scope: z
    .string()
    .nullish()
    .transform((v) => v ?? undefined),
});
export type TokenResponse = z.output<typeof tokenResponseSchema>;
