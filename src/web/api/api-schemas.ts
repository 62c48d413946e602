// The JSON API's requests and answers, declared once as zod schemas: the routes validate with them, the
// OpenAPI document (/api/openapi.json) is generated from them, and the answers are checked against them before
// they are sent. Times are ISO 8601 with the offset of the zone asked for.
import { IANAZone } from 'luxon';
import { z } from 'zod';
import {
  DEFAULT_TEAM_MINIMUM_MINUTES,
  DEFAULT_TEAM_MODE,
  minimumConflict,
  TEAM_MINIMUM_MAX_MINUTES,
  TEAM_MODES,
} from '../../feeds/feed-options.js';

/** The longest range one request may ask for: a leap year. */
export const MAX_RANGE_DAYS = 366;

const day = z.iso.date().describe('A date, YYYY-MM-DD, in `zone`.');
const zone = z
  .string()
  .refine((value) => IANAZone.isValidZone(value), { message: 'not an IANA time zone, e.g. Europe/Berlin' })
  .describe('An IANA time zone for the range and the answer’s times.');

const range = {
  from: day
    .optional()
    .describe(
      'First day (default: today in `zone`). A feed’s token reads only the days its feed shows, whatever the range.',
    ),
  to: day.optional().describe('Last day, inclusive (default: six days after `from`).'),
};

export const connectionParams = z.strictObject({ connectionId: z.uuid() });
export const teamParams = z.strictObject({ teamId: z.uuid() });

export const availabilityQuery = z.strictObject({
  ...range,
  zone: zone.optional().describe('Default: the account’s zone (UTC when not known yet).'),
  eventType: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'Only this event type (its id, as listed by /event-types): 404 for one there is not. An API key may name a secret one; a feed’s token only those its feed shows.',
    ),
});

// Mode and minimum as asked (no defaults here): a feed's token may only ask for its feed's own, and a minimum
// with mode any is refused by the rule the CLI and the feed store use (minimumConflict).
export const teamAvailabilityQuery = z
  .strictObject({
    ...range,
    zone: zone.optional().describe('Default: UTC.'),
    mode: z
      .enum(TEAM_MODES)
      .optional()
      .describe(
        `all: when every member is free; any: when someone is. Default: ${DEFAULT_TEAM_MODE}; a feed's token: its feed's, and only that.`,
      ),
    minimum: z.coerce
      .number()
      .int()
      .min(1)
      .max(TEAM_MINIMUM_MAX_MINUTES)
      .optional()
      .describe(
        `Mode all only: the shortest time together returned, in minutes. Default: ${DEFAULT_TEAM_MINIMUM_MINUTES}; a feed's token: its feed's, and only that.`,
      ),
  })
  .superRefine((query, context) => {
    const conflict = minimumConflict(query.mode ?? DEFAULT_TEAM_MODE, query.minimum);
    if (conflict !== undefined) context.addIssue({ code: 'custom', path: ['minimum'], message: conflict });
  });

const time = z.string().describe('ISO 8601 with the offset of `zone`, e.g. 2026-03-02T10:00:00.000+01:00.');
const interval = { start: time, end: time };

const rangeAnswer = {
  zone: z.string(),
  from: z.string().describe('YYYY-MM-DD'),
  to: z.string().describe('YYYY-MM-DD, inclusive'),
};

export const connectionStatus = z.enum(['active', 'needs_reauth', 'disabled']);

export const availabilityResponse = z
  .object({
    connectionId: z.uuid(),
    ...rangeAnswer,
    status: connectionStatus.describe(
      'needs_reauth or disabled: what is shown is the last synced snapshot, no longer updated.',
    ),
    lastChanged: z
      .string()
      .nullable()
      .describe('When anything shown last changed; null before the first sync.'),
    free: z
      .array(
        z.object({ ...interval, eventTypes: z.array(z.string()).describe('Bookable inside the block.') }),
      )
      .describe(
        'Blocks of free time: open slots merged across event types; empty for a feed’s token whose feed shows busy time only.',
      ),
    slots: z
      .array(z.object({ ...interval, eventType: z.string() }))
      .describe('Bookable slots, by start; empty for a feed’s token whose feed does not show slots.'),
    busy: z
      .array(z.object(interval))
      .describe(
        'Bookings slotfeed inferred (time that became unavailable); empty for a feed’s token whose feed shows no busy time.',
      ),
  })
  .meta({ id: 'Availability' });

export const eventTypesResponse = z
  .object({
    connectionId: z.uuid(),
    eventTypes: z.array(
      z.object({
        id: z.string(),
        title: z.string(),
        enabled: z.boolean(),
        secret: z.boolean().describe('Bookable only through its link; in availability only when named.'),
      }),
    ),
  })
  .meta({ id: 'EventTypes' });

export const teamAvailabilityResponse = z
  .object({
    teamId: z.uuid(),
    name: z.string(),
    ...rangeAnswer,
    mode: z.enum(TEAM_MODES),
    minimumMinutes: z.number().int().nullable().describe('Mode all only.'),
    members: z.array(
      z.object({
        name: z.string().describe('Display name; never an e-mail address.'),
        status: connectionStatus,
        lastChanged: z.string().nullable(),
      }),
    ),
    blocks: z.array(z.object({ ...interval, free: z.array(z.string()).describe('Who is free, by name.') })),
  })
  .meta({ id: 'TeamAvailability' });

/** RFC 9457 problem details: what every error answer of the API is. */
export const problemResponse = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string(),
  })
  .meta({ id: 'Problem' });

/** The media type every error answer is sent with (error-handler.ts), and so documented with. */
export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

const problem = (description: string) => ({
  description,
  content: { [PROBLEM_MEDIA_TYPE]: { schema: problemResponse } },
});

/** The errors every route may answer with, besides its own 200 and 304. */
export const PROBLEMS = {
  400: problem('The request is malformed (a bad query, an id that is not one, a bad percent-encoding).'),
  401: problem('No valid bearer credential.'),
  404: problem(
    'No such connection, team or event type, or not in this credential’s scope (a feed’s token choosing another event type, mode or minimum than its feed’s).',
  ),
  414: problem('A path segment is longer than any id.'),
  429: problem('Too many requests: wait Retry-After seconds.'),
  503: problem('The database is busy or unreachable: try again after Retry-After.'),
};

export const NOT_MODIFIED = z.null().describe('Not modified: the If-None-Match tag is still current.');

export const feedParams = z.strictObject({ feedId: z.uuid() });
export const shareLinkParams = z.strictObject({ feedId: z.uuid(), shareLinkId: z.uuid() });

export const shareLinkBody = z
  .strictObject({
    label: z.string().min(1).max(100).describe('Who the link is for; shown only to those who manage it.'),
    expires: z
      .string()
      .max(20)
      .optional()
      .describe(
        '"never" (the default), a number of days ("7d") or the last date it works (YYYY-MM-DD, the whole day in the account’s zone; UTC for a team feed).',
      ),
    embedOrigins: z
      .array(z.string().max(200))
      .max(10)
      .optional()
      .describe(
        'Origins whose pages may show the page in an iframe (CSP frame-ancestors); none: not embeddable.',
      ),
  })
  .meta({ id: 'ShareLinkRequest' });

const shareLink = z
  .object({
    id: z.uuid(),
    feedId: z.uuid(),
    label: z.string(),
    expiresAt: z.string().nullable().describe('null: never expires.'),
    embedOrigins: z.array(z.string()),
    createdAt: z.string(),
    revokedAt: z.string().nullable(),
    lastOpenedAt: z.string().nullable().describe('To the minute.'),
  })
  .meta({ id: 'ShareLink' });

export const shareLinksResponse = z
  .object({ feedId: z.uuid(), shareLinks: z.array(shareLink).describe('Active links first, newest first.') })
  .meta({ id: 'ShareLinks' });

export const shareLinkCreatedResponse = z
  .object({
    shareLink,
    url: z.string().describe('The page’s address: shown only in this answer.'),
  })
  .meta({ id: 'ShareLinkCreated' });

export const shareLinkResponse = z.object({ shareLink }).meta({ id: 'ShareLinkAnswer' });
