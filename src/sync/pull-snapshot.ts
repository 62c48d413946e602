// What one sync asks the scheduling service, and nothing more: the profile (for the account's time zone), the
// event types, overview windows covering the horizon for each enabled event type, and the slots of every
// date those overviews call available. So a sync costs 2 + Σ(windows + available dates) calls, the minimum
// the API allows. Every payload has been validated by the upstream client before it reaches this module.
import pLimit from 'p-limit';
import type { SnapshotInput } from '../store/snapshots.js';
import type { FetchedSlot } from '../store/slot-diff.js';
import type { ApiClient, EventType, Overview } from '../upstream/index.js';
import { horizonFrom, windowsCovering, type OverviewWindow } from './horizon-windows.js';
import type { UpstreamSession } from './upstream-session.js';

export interface PullSettings {
  horizonDays: number;
  overviewWindowDays: number;
  fetchConcurrency: number;
}

interface EventTypePull {
  overviewPayload: unknown;
  slots: FetchedSlot[];
}

async function pullEventType(
  session: UpstreamSession,
  api: ApiClient,
  schedule: <T>(task: () => Promise<T>) => Promise<T>,
  eventType: EventType,
  zone: string,
  horizonDates: ReadonlySet<string>,
  windows: OverviewWindow[],
): Promise<EventTypePull> {
  const id = eventType.event_id;
  const overviews: Overview[] = await Promise.all(
    windows.map((w) =>
      schedule(() =>
        session.call('GET /calendars/{event_id}', (token) =>
          api.getOverview(token, id, { startDate: w.startDate, timezone: zone, period: w.period }),
        ),
      ),
    ),
  );
  // An overview may list dates outside the window asked for; only the horizon's dates are fetched.
  const availableDates = [
    ...new Set(overviews.flatMap((o) => o.availability.available_dates).filter((d) => horizonDates.has(d))),
  ].sort();
  const slotLists = await Promise.all(
    availableDates.map((date) =>
      schedule(() =>
        session.call('GET /calendars/{event_id}/slots', (token) =>
          api.getSlots(token, id, { date, timezone: zone }),
        ),
      ),
    ),
  );
  const durationMs = eventType.duration_minutes * 60_000;
  const slots = slotLists.flatMap((list) =>
    list.starts.map((start) => {
      const startsAt = new Date(start);
      return { eventId: id, startsAt, endsAt: new Date(startsAt.getTime() + durationMs) };
    }),
  );
  const overviewPayload = {
    timezone: zone,
    windows: windows.map((w, i) => ({ startDate: w.startDate, period: w.period, overview: overviews[i] })),
  };
  return { overviewPayload, slots };
}

export async function pullSnapshot(
  session: UpstreamSession,
  api: ApiClient,
  settings: PullSettings,
  now: Date,
): Promise<SnapshotInput> {
  const profile = await session.call('GET /users/me', (token) => api.getProfile(token));
  const eventTypes = await session.call('GET /events', (token) => api.listEventTypes(token));

  const zone = profile.timezone;
  const horizon = horizonFrom(now, zone, settings.horizonDays);
  const windows = windowsCovering(horizon, settings.overviewWindowDays);
  const horizonDates = new Set(horizon.dates);
  const schedule = pLimit(settings.fetchConcurrency);

  const enabled = eventTypes.filter((e) => e.enabled);
  const pulls = await Promise.all(
    enabled.map((e) => pullEventType(session, api, schedule, e, zone, horizonDates, windows)),
  );

  return {
    profile: { payload: profile, email: profile.email, name: profile.name, timezone: zone },
    eventTypes: eventTypes.map((e) => ({
      upstreamEventId: e.event_id,
      title: e.title,
      durationMinutes: e.duration_minutes,
      enabled: e.enabled,
      url: e.url,
      color: e.color,
      payload: e,
    })),
    overviews: enabled.map((e, i) => ({ upstreamEventId: e.event_id, payload: pulls[i]?.overviewPayload })),
    slots: pulls.flatMap((p) => p.slots),
  };
}
