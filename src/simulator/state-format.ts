// What a simulator's state file holds, and the check that a file read back is one this simulator can use.
//
// State is what happened to the world after it was made: the accounts as the control API left them (bookings
// made and freed, weekly hours, disabled dates, event types edited or deleted), the change log, and the
// OAuth server's codes, grants, refresh and access tokens with the secret and issuers that signed them. The
// accounts are kept whole rather than regenerated from the seed, because generating them depends on the time of
// generation (seeded bookings and disabled dates are placed relative to it): a world regenerated at a restart
// would be another world. What is not state: the clock (the demo shares one clock between the simulator and
// slotfeed; an offset kept here would set them apart), the faults (set per run, by the start's options and the
// control API) and the call counts (a measure of one run).
import { z } from 'zod';
import type { GrantStoreState } from './grants.js';
import type { SimChange, SimUser } from './types.js';
import { WEEKDAYS } from './types.js';

export const STATE_FORMAT = 'calendbook-simulator-state';
/** Raise when the shape below changes in a way an older file does not satisfy. */
export const STATE_VERSION = 1;

/** The start options that made the world: a file is only valid for a start asking for the same. */
export interface WorldIdentity {
  seed: number;
  users: number;
  eventTypesPerUser: number | null;
}

export interface SimulatorState {
  world: WorldIdentity;
  users: SimUser[];
  changes: SimChange[];
  oauth: GrantStoreState & { signingKey: string; issuers: string[] };
}

const START_AFRESH =
  'delete it to start a fresh simulated world (accounts connected to the old one must then connect again)';

/** Thrown when a state file cannot be read, parsed or used; the message names the file and what to do. */
export class SimulatorStateError extends Error {
  constructor(
    readonly file: string,
    problem: string,
    remedy = `Keep a copy if it matters, then ${START_AFRESH}.`,
  ) {
    super(`Simulator state file ${file} ${problem}. ${remedy}`);
    this.name = 'SimulatorStateError';
  }
}

const hhmm = z.string().regex(/^(([01]\d|2[0-3]):[0-5]\d|24:00)$/);
const range = z.strictObject({ start: hhmm, end: hhmm });
const weeklyHours = z.strictObject(
  Object.fromEntries(WEEKDAYS.map((day) => [day, z.array(range)])) as Record<
    (typeof WEEKDAYS)[number],
    z.ZodArray<typeof range>
  >,
);
const ms = z.number().int();

const eventType = z.strictObject({
  payload: z.strictObject({
    event_id: z.string().min(1),
    title: z.string(),
    booking_type: z.string(),
    color: z.string(),
    description: z.string(),
    duration_minutes: z.number().int().min(1),
    enabled: z.boolean(),
    is_team: z.boolean(),
    location: z.strictObject({ type: z.string(), value: z.string() }),
    buffer_after_minutes: z.number().int().min(0),
    buffer_before_minutes: z.number().int().min(0),
    is_secret: z.boolean(),
    redirect_url: z.string(),
    url: z.string(),
  }),
  maxDaysAhead: z.number().int().min(0),
});

const user = z.strictObject({
  id: z.string().min(1),
  profile: z.strictObject({
    name: z.string(),
    email: z.string(),
    avatar: z.string(),
    language: z.string(),
    timezone: z.string(),
    notification_settings: z.strictObject({
      guest_notification_broker: z.string(),
      notification_broker: z.string(),
      pending_actions: z.string(),
    }),
  }),
  eventTypes: z.array(eventType),
  weeklyHours,
  disabledDays: z.array(z.iso.date()),
  disabledMonths: z.array(z.number().int().min(1).max(12)),
  bookings: z.array(z.strictObject({ eventId: z.string(), startMs: ms, endMs: ms })),
});

const change = z.strictObject({
  kind: z.enum(['booked', 'freed']),
  userId: z.string(),
  eventId: z.string(),
  startMs: ms,
  endMs: ms,
  atMs: ms,
});

const oauth = z.strictObject({
  signingKey: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'a 32-byte base64url secret'),
  issuers: z.array(z.string()),
  codes: z.array(
    z.strictObject({
      code: z.string(),
      clientId: z.string(),
      redirectUri: z.string(),
      userId: z.string(),
      scope: z.string(),
      codeChallenge: z.string().nullable(),
      issuedAtMs: ms,
      redeemedGrantId: z.string().nullable(),
    }),
  ),
  grants: z.array(
    z.strictObject({
      id: z.string(),
      userId: z.string(),
      clientId: z.string(),
      scope: z.string(),
      revoked: z.boolean(),
      accessTokenIds: z.array(z.string()),
    }),
  ),
  refreshTokens: z.array(z.strictObject({ token: z.string(), grantId: z.string(), spent: z.boolean() })),
});

const world = z.strictObject({
  seed: z.number(),
  users: z.number().int(),
  eventTypesPerUser: z.number().int().nullable(),
});

// Typed as the state itself, so the compiler holds this schema and the types it reads into to each other.
const stateSchema: z.ZodType<SimulatorState> = z.strictObject({
  world,
  users: z.array(user),
  changes: z.array(change),
  oauth,
});

const envelope = z.looseObject({ format: z.literal(STATE_FORMAT), version: z.number() });

/** The file's text for a state. */
export function serializeState(state: SimulatorState): string {
  return `${JSON.stringify({ format: STATE_FORMAT, version: STATE_VERSION, ...state })}\n`;
}

const describeWorld = (w: WorldIdentity) =>
  `seed ${w.seed} with ${w.users} users` +
  (w.eventTypesPerUser === null ? '' : ` of ${w.eventTypesPerUser} event types each`);

/** The state in `text`, read from `file`, for a start that asks for `expected`; a SimulatorStateError if unusable. */
export function parseState(file: string, text: string, expected: WorldIdentity): SimulatorState {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new SimulatorStateError(file, 'is not valid JSON (damaged or cut short)');
  }
  const head = envelope.safeParse(json);
  if (!head.success) throw new SimulatorStateError(file, 'is not a simulator state file');
  if (head.data.version !== STATE_VERSION) {
    throw new SimulatorStateError(
      file,
      `has format version ${head.data.version}, and this simulator reads version ${STATE_VERSION}`,
    );
  }
  const { format: _format, version: _version, ...body } = head.data;
  const parsed = stateSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SimulatorStateError(
      file,
      `is damaged (${issue ? `${issue.path.join('.') || 'top level'}: ${issue.message}` : 'invalid'})`,
    );
  }
  const found = parsed.data.world;
  if (
    found.seed !== expected.seed ||
    found.users !== expected.users ||
    found.eventTypesPerUser !== expected.eventTypesPerUser
  ) {
    throw new SimulatorStateError(
      file,
      `holds the world of ${describeWorld(found)}, and this start asks for ${describeWorld(expected)}`,
      `Start with the options that made it to continue that world, or ${START_AFRESH}.`,
    );
  }
  return parsed.data;
}
