// Shapes shared by the simulator's modules and its public contract (re-exported from index.ts).

export type Weekday = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';
/** Luxon weekday numbers are 1 = Monday … 7 = Sunday; index = weekday - 1. */
export const WEEKDAYS: readonly Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/** Owner-local wall-clock range 'HH:mm'–'HH:mm' ('24:00' allowed as an end), start < end. */
export interface WorkingRange {
  start: string;
  end: string;
}
export type WeeklyHours = Record<Weekday, WorkingRange[]>;

/** Section 2.1 of the service description. */
export interface EventTypePayload {
  event_id: string;
  title: string;
  booking_type: string;
  color: string;
  description: string;
  duration_minutes: number;
  enabled: boolean;
  is_team: boolean;
  location: { type: string; value: string };
  buffer_after_minutes: number;
  buffer_before_minutes: number;
  is_secret: boolean;
  redirect_url: string;
  url: string;
}

/** Section 2.2. */
export interface UserProfilePayload {
  name: string;
  email: string;
  avatar: string;
  language: string;
  timezone: string;
  notification_settings: {
    guest_notification_broker: string;
    notification_broker: string;
    pending_actions: string;
  };
}

export interface SimBooking {
  eventId: string;
  startMs: number;
  endMs: number;
}

/**
 * A change to an owner's bookable time: a booking made (its slots, and any other event type's slots that
 * overlap it, close) or freed (they open again). `atMs` is when, on the simulator's clock.
 */
export interface SimChange {
  kind: 'booked' | 'freed';
  userId: string;
  eventId: string;
  startMs: number;
  endMs: number;
  atMs: number;
}

export interface SimEventType {
  payload: EventTypePayload;
  /** Booking horizon: owner-local dates up to today + this many days are bookable. */
  maxDaysAhead: number;
}

/** Mutable record of one simulated account; only the simulator's own modules touch it. */
export interface SimUser {
  id: string;
  profile: UserProfilePayload;
  eventTypes: SimEventType[];
  weeklyHours: WeeklyHours;
  disabledDays: string[];
  disabledMonths: number[];
  bookings: SimBooking[];
}

export interface SimUserSummary {
  id: string;
  email: string;
  name: string;
  timezone: string;
}

/** What listUsers() and GET /__sim/users return. */
export interface SimUserDetails extends SimUserSummary {
  profile: UserProfilePayload;
  event_types: EventTypePayload[];
  weekly_hours: WeeklyHours;
  disabled_days: string[];
  disabled_months: number[];
  max_days_ahead: Record<string, number>;
  bookings: { event_id: string; start: string; end: string }[];
}

export type EventTypePatch = Partial<Omit<EventTypePayload, 'event_id'>> & { max_days_ahead?: number };

export type DriftVariant =
  | 'monthsAsStrings'
  | 'firstAvailableNull'
  | 'firstAvailableAsDateTime'
  | 'datesInUtc'
  | 'datesWithoutOffset'
  | 'zoneNotAsked'
  | 'invalidShape';

/**
 * A body the simulator makes up on the spot instead of holding it in the fault queue: `large` is a JSON
 * object padded to `bytes` (with or without a Content-Length header, so clients must cap streamed bodies
 * too); `deep` is `depth` nested arrays.
 */
export type RawBodyGenerator =
  { shape: 'large'; bytes: number; declareLength: boolean } | { shape: 'deep'; depth: number };

/** An arbitrary answer (status, content type, body), sent before the endpoint runs: for hostile payloads. */
export interface RawReply {
  kind: 'raw';
  status: number;
  contentType: string;
  /** Sent as is; ignored when `generate` is set. */
  body?: string;
  generate?: RawBodyGenerator;
}

export type FaultOutcome = { endpoint?: string } & (
  | { kind: 'status'; status: number }
  | RawReply
  | { kind: 'hang' }
  | { kind: 'malformed' }
  | { kind: 'rate_limited'; retryAfter: string }
  | { kind: 'drift'; variant: DriftVariant }
);

/**
 * Faults apply to the four API endpoints and POST /oauth2/token, never to /login or /__sim/.
 * Order per request: a matching queue entry (consumed) wins; else the per-client rate limit; else the random
 * rates (hang, then error, then malformed) and the drift flags. `only` restricts latency, the random rates and
 * the drift flags; the queue has its own `endpoint` filter and the rate limit covers every faultable endpoint.
 * status/hang/rate_limited answer before the endpoint runs (no side effects); malformed runs it (a token may be
 * issued) and truncates the body. firstAvailableAsDateTime, datesInUtc and datesWithoutOffset rewrite
 * last_available_date too; when several are on, the first in DRIFT_FLAG_VARIANTS (drift.ts) wins.
 */
export interface FaultSettings {
  latencyMs: number;
  jitterMs: number;
  errorRate: number;
  hangRate: number;
  malformedJsonRate: number;
  /** Sliding one-second window on the SIM clock, per client_id. */
  rateLimit: { requestsPerSecond: number; retryAfter: 'seconds' | 'http-date' };
  drift: {
    monthsAsStrings: boolean;
    firstAvailableNull: boolean;
    firstAvailableAsDateTime: boolean;
    datesInUtc: boolean;
    datesWithoutOffset: boolean;
    zoneNotAsked: boolean;
    invalidShapes: boolean;
  };
  /** Endpoint keys such as 'GET /events'; set null through setFaults to lift the restriction. */
  only?: string[];
  queue: FaultOutcome[];
}

/** setFaults() takes nested partials too: { drift: { invalidShapes: true } } keeps the other drift flags. */
export type FaultSettingsPatch = Partial<Omit<FaultSettings, 'rateLimit' | 'drift'>> & {
  rateLimit?: Partial<FaultSettings['rateLimit']>;
  drift?: Partial<FaultSettings['drift']>;
};

export type CallCounts = Record<string, number>;

export interface CallArrival {
  endpoint: string;
  atMs: number;
}

export interface SimulatorControl {
  listUsers(): SimUserDetails[];
  book(eventId: string, startIso: string): void;
  free(eventId: string, startIso: string): void;
  setWeeklyHours(userId: string, hours: Partial<WeeklyHours>): void;
  /** Extra: replace the owner's disabled dates ('YYYY-MM-DD', owner-local) and months (1–12). */
  setDisabledDates(userId: string, disabled: { days?: string[]; months?: number[] }): void;
  updateEventType(userId: string, eventId: string, patch: EventTypePatch): EventTypePayload;
  deleteEventType(userId: string, eventId: string): void;
  /** Returns how many grants were revoked. */
  revokeGrants(userId: string): number;
  setFaults(patch: FaultSettingsPatch): FaultSettings;
  getFaults(): FaultSettings;
  setClock(iso: string): void;
  advanceClock(seconds: number): void;
  now(): Date;
  callCounts(): CallCounts;
  callCountsByUser(): Record<string, CallCounts>;
  /** When each counted request arrived (sim clock, ms), oldest first; the most recent 100 000 only. */
  callArrivals(): CallArrival[];
  resetCallCounts(): void;
  /** Every booking made or freed through this control, oldest first (the most recent 200 000). */
  changes(): SimChange[];
  slotsFor(eventId: string, fromIso: string, toIso: string): string[];
}

export interface SimLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** A credential the simulator handed out, as reported to SimulatorOptions.onCredentialIssued. */
export interface IssuedCredential {
  kind: 'authorization_code' | 'access_token' | 'refresh_token';
  value: string;
  userId: string;
}

export interface SimulatorOptions {
  host?: string;
  port?: number;
  users?: number;
  /**
   * Every user gets exactly this many event types, all enabled (benchmarks need a known call count per sync).
   * Unset: 1–6 per user, some disabled or secret, and user 0's fixed four.
   */
  eventTypesPerUser?: number;
  seed?: number;
  /**
   * How fast simulated time runs against `now` (default 1): at 60, an hour of bookings, token lifetimes and
   * slot expiry passes in a minute of the clock it is given.
   */
  clockSpeed?: number;
  clientId?: string;
  clientSecret?: string;
  redirectUris?: string[];
  accessTokenTtlSeconds?: number;
  rotateRefreshTokens?: boolean;
  requestsPerSecondPerClient?: number;
  faults?: FaultSettingsPatch;
  now?: () => Date;
  logger?: SimLogger;
  /**
   * Test-only: told of every code and token issued, so secret-leak tests know exactly what to look for in
   * slotfeed's storage and logs. The simulator keeps no list of its own (the demo runs for days).
   */
  onCredentialIssued?: (credential: IssuedCredential) => void;
  /**
   * A few words the sign-in page shows beside a user, or undefined for none: the demo marks the users it
   * connected, so a person signing in picks one that has feeds.
   */
  signInNote?: (user: SimUserSummary, index: number) => string | undefined;
  /**
   * Keeps the simulated world in this file (JSON, owner-only): loaded at start when it exists, else a fresh world
   * from the seed is written there, then rewritten after every change and by close(). What it keeps is listed
   * in state-format.ts. A file that cannot be used (damaged, another format version, another seed, user count
   * or eventTypesPerUser) makes the start fail with a SimulatorStateError naming it.
   */
  stateFile?: string;
}

export interface RunningSimulator {
  origin: string;
  baseUrl: string;
  authUrl: string;
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  users: SimUserSummary[];
  control: SimulatorControl;
  /** A fetch answered by this simulator in this process, without a socket (in-process-fetch.ts). */
  inProcessFetch: typeof fetch;
  /** Stops listening; with a state file, resolves once every change made before is written to it. */
  close(): Promise<void>;
}

/** Thrown by control operations; the /__sim/ routes turn `status` into the HTTP status. */
export class SimulatorControlError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'SimulatorControlError';
  }
}
