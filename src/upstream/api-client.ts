import { UpstreamAuthError } from './errors.js';
import { exchangeJson } from './http-exchange.js';
import type { ExchangeSettings } from './http-exchange.js';
import { parsePayload } from './payload-check.js';
import { eventTypeListSchema, overviewSchema, profileSchema, slotListSchema } from './schemas.js';
import type { EventType, Overview, Profile, SlotList } from './schemas.js';

export type UpstreamEndpoint =
  'GET /events' | 'GET /users/me' | 'GET /calendars/{event_id}' | 'GET /calendars/{event_id}/slots';

export interface ApiClientOptions {
  baseUrl: string;
  timeoutMs: number;
  /** The seed names no query parameters for the slots call; docs/architecture.md settles on date/timezone. */
  slotsQuery: { dateParam: string; timezoneParam: string };
  fetch?: typeof fetch;
  now?: () => Date;
  /** Default 5 MiB. A larger 2xx body is an invalid_payload error and the rest of the stream is cancelled. */
  maxBodyBytes?: number;
  /** Aborts in-flight calls (shutdown); the abort reason is rethrown as is. */
  signal?: AbortSignal;
  onCall?: (endpoint: UpstreamEndpoint, outcome: { status?: number; ms: number }) => void;
}

export interface OverviewQuery {
  /** YYYY-MM-DD */
  startDate: string;
  /** IANA zone of the guest; the overview's dates are expressed in it. */
  timezone: string;
  /** {number}{d|w|m}, below two months (seed §4.1); checked by the service, which answers 400. */
  period?: string;
}

export interface SlotsQuery {
  /** YYYY-MM-DD */
  date: string;
  timezone: string;
}

export interface ApiClient {
  listEventTypes(accessToken: string): Promise<EventType[]>;
  getProfile(accessToken: string): Promise<Profile>;
  getOverview(accessToken: string, eventId: string, q: OverviewQuery): Promise<Overview>;
  getSlots(accessToken: string, eventId: string, q: SlotsQuery): Promise<SlotList>;
}

export const DEFAULT_MAX_BODY_BYTES = 5 * 1024 * 1024;

// RFC 6750 b64token is narrower, but anything visible ASCII is what a header can carry; checking it here
// keeps fetch from throwing a TypeError whose message would quote the token.
const SENDABLE_TOKEN = /^[\x21-\x7e]+$/;

/** The service's REST API (seed §4). Every call: bearer token, Accept JSON, timeout, zod-checked payload. */
export function createApiClient(o: ApiClientOptions): ApiClient {
  const settings: ExchangeSettings<UpstreamEndpoint> = {
    fetch: o.fetch ?? globalThis.fetch,
    timeoutMs: o.timeoutMs,
    now: o.now ?? (() => new Date()),
    maxBodyBytes: o.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    signal: o.signal,
    onCall: o.onCall,
  };
  const base = o.baseUrl.replace(/\/+$/, '');

  async function getJson(
    endpoint: UpstreamEndpoint,
    path: string,
    query: Record<string, string | undefined>,
    accessToken: string,
  ): Promise<{ status: number; json: unknown }> {
    if (!SENDABLE_TOKEN.test(accessToken)) {
      throw new UpstreamAuthError({
        endpoint,
        reason: 'invalid_token',
        message: `${endpoint} not called: the access token is empty or not sendable in a header`,
      });
    }
    const url = new URL(base + path);
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(name, value);
    }
    return exchangeJson(settings, {
      endpoint,
      url,
      method: 'GET',
      headers: { accept: 'application/json', authorization: `Bearer ${accessToken}` },
      secrets: [accessToken],
    });
  }

  function calendarPath(eventId: string): string {
    // encodeURIComponent leaves dots alone and URL parsing resolves "." and ".." (even as %2E) as path
    // steps, so these ids would address another resource rather than an event type.
    if (eventId === '' || eventId === '.' || eventId === '..') {
      throw new TypeError(`eventId ${JSON.stringify(eventId)} cannot be a path segment`);
    }
    return `/calendars/${encodeURIComponent(eventId)}`;
  }

  return {
    async listEventTypes(accessToken) {
      const endpoint = 'GET /events';
      const { status, json } = await getJson(endpoint, '/events', {}, accessToken);
      return parsePayload(eventTypeListSchema, json, { endpoint, status });
    },

    async getProfile(accessToken) {
      const endpoint = 'GET /users/me';
      const { status, json } = await getJson(endpoint, '/users/me', {}, accessToken);
      return parsePayload(profileSchema, json, { endpoint, status });
    },

    async getOverview(accessToken, eventId, q) {
      const endpoint = 'GET /calendars/{event_id}';
      const query = { start_date: q.startDate, timezone: q.timezone, period: q.period };
      const { status, json } = await getJson(endpoint, calendarPath(eventId), query, accessToken);
      return parsePayload(overviewSchema, json, { endpoint, status });
    },

    async getSlots(accessToken, eventId, q) {
      const endpoint = 'GET /calendars/{event_id}/slots';
      const query = { [o.slotsQuery.dateParam]: q.date, [o.slotsQuery.timezoneParam]: q.timezone };
      const { status, json } = await getJson(endpoint, `${calendarPath(eventId)}/slots`, query, accessToken);
      return parsePayload(slotListSchema, json, { endpoint, status });
    },
  };
}
