// What one sync asks the scheduling service, and nothing more: the profile (for the account's time zone), the
// event types, and for each enabled event type and each band pulled (config/sync-bands.ts) the overview windows
// covering the band's dates and the slots of every date those overviews call available. So a sync costs
// 2 + Σ(windows + available dates) calls, the minimum the API allows for the dates it pulls; a band is asked
// for in windows of its own, so each band's overview is stored, and replaced, whole. Every payload has been
// validated by the upstream client before it reaches this module.
import { DateTime } from 'luxon';
import pLimit, { type LimitFunction } from 'p-limit';
import type { SnapshotInput } from '../store/snapshots.js';
import type { FetchedSlot } from '../store/slot-diff.js';
import {
  formatIssuePath,
  UpstreamInvalidPayloadError,
  type ApiClient,
  type EventType,
  type Overview,
} from '../upstream/index.js';
import { isSameZone } from '../upstream/iso-values.js';
import { bandsWithin, type CadenceBand } from '../config/sync-bands.js';
import { datesOfBand } from './cadence-bands.js';
import { horizonFrom, windowsCovering, type OverviewWindow } from './horizon-windows.js';
import type { UpstreamSession } from './upstream-session.js';

export interface PullSettings {
  horizonDays: number;
  /** SYNC_BANDS: the horizon cut into bands by days ahead, each pulled on its own interval. */
  bands: readonly CadenceBand[];
  overviewWindowDays: number;
  fetchConcurrency: number;
}

/**
 * The service answers with the slots of the date asked for. A key that is a valid instant but nowhere near
 * that date (year 1, year 9999) is garbage the schema cannot see; stored, it would sit in the snapshot and
 * the reports until the next sync. A day of slack either side allows for a service that reads the date in
 * another zone than the one we sent.
 */
function checkSlotsNearDate(starts: readonly string[], date: string, zone: string): void {
  const day = DateTime.fromISO(date, { zone });
  const earliest = day.minus({ days: 1 }).toMillis();
  const latest = day.plus({ days: 2 }).toMillis();
  const stray = starts.find((start) => {
    const ms = Date.parse(start);
    return ms < earliest || ms >= latest;
  });
  if (stray !== undefined) {
    throw new UpstreamInvalidPayloadError({
      endpoint: 'GET /calendars/{event_id}/slots',
      status: 200,
      path: formatIssuePath(['slot_list', stray]),
      issue: `starts more than a day away from the date asked for (${date})`,
      retryable: false,
    });
  }
}

/**
 * An overview's dates are dates in its `timezone`; in another zone than the one asked for they are other
 * days than the horizon's, and nothing in the payload says how to move them back. The service answers in
 * the zone asked for (seed §4.1: the overview is "in the guest's time zone"), so a different zone is a
 * broken answer, refused rather than converted. Another name for the same zone (Asia/Calcutta for
 * Asia/Kolkata) is the same answer.
 */
function checkOverviewZone(overview: Overview, zone: string): void {
  if (isSameZone(overview.timezone, zone)) return;
  throw new UpstreamInvalidPayloadError({
    endpoint: 'GET /calendars/{event_id}',
    status: 200,
    path: 'timezone',
    issue: `is ${overview.timezone}, not the zone asked for (${zone})`,
    retryable: false,
  });
}

/** One band's part of a pull: its dates, asked for in windows of their own. */
interface BandSegment {
  band: string;
  dates: string[];
  windows: OverviewWindow[];
}

interface SegmentPull {
  overviewPayload: unknown;
  slots: FetchedSlot[];
  calls: number;
}

async function pullSegment(
  session: UpstreamSession,
  api: ApiClient,
  schedule: <T>(task: () => Promise<T>) => Promise<T>,
  eventType: EventType,
  zone: string,
  segment: BandSegment,
): Promise<SegmentPull> {
  const id = eventType.event_id;
  const { windows } = segment;
  const overviews: Overview[] = await Promise.all(
    windows.map((w) =>
      schedule(async () => {
        const overview = await session.call('GET /calendars/{event_id}', (token) =>
          api.getOverview(token, id, { startDate: w.startDate, timezone: zone, period: w.period }),
        );
        checkOverviewZone(overview, zone);
        return overview;
      }),
    ),
  );
  // An overview may list dates outside the window asked for; only the segment's own dates are fetched.
  const segmentDates = new Set(segment.dates);
  const availableDates = [
    ...new Set(overviews.flatMap((o) => o.availability.available_dates).filter((d) => segmentDates.has(d))),
  ].sort();
  const slotLists = await Promise.all(
    availableDates.map((date) =>
      // Checked inside the scheduled call, so a stray slot stops the rest of the pull like any failed call.
      schedule(async () => {
        const list = await session.call('GET /calendars/{event_id}/slots', (token) =>
          api.getSlots(token, id, { date, timezone: zone }),
        );
        checkSlotsNearDate(list.starts, date, zone);
        return list;
      }),
    ),
  );
  const durationMs = eventType.duration_minutes * 60_000;
  const slots = slotLists.flatMap((list) =>
    list.starts.map((start) => {
      const startsAt = new Date(start);
      return { eventId: id, startsAt, endsAt: new Date(startsAt.getTime() + durationMs) };
    }),
  );
  // The overviews as the service sent them (their schema transforms nothing), in the zone they were asked in.
  const overviewPayload = {
    timezone: zone,
    windows: windows.map((w, i) => ({ startDate: w.startDate, period: w.period, overview: overviews[i] })),
  };
  return { overviewPayload, slots, calls: windows.length + availableDates.length };
}

/**
 * Once one call of a pull has failed the attempt is over (Promise.all has rejected), but p-limit would
 * still run every queued call: a failed sync would go on spending the shared upstream rate limit for
 * nothing, after its job was already reported failed. Queued calls are dropped instead; calls already in
 * flight finish on their own.
 */
function stopOnFirstFailure(limit: LimitFunction): <T>(task: () => Promise<T>) => Promise<T> {
  let failed = false;
  // The flag is set inside the limited function, before p-limit starts the next queued call.
  return (task) =>
    limit(async () => {
      if (failed) throw new PullAbandonedError();
      try {
        return await task();
      } catch (error: unknown) {
        failed = true;
        throw error;
      }
    });
}

class PullAbandonedError extends Error {
  constructor() {
    super('not sent: an earlier call of this sync failed');
    this.name = 'PullAbandonedError';
  }
}

/**
 * What to pull: every band (a first or a forced sync), or the bands named (a scheduled partial sync), given
 * the event types the store holds enabled. A partial pull whose list of event types enables another set (one
 * new or enabled again, one disabled or removed) pulls every band all the same: a newly enabled type's slots
 * would otherwise open on the pulled bands' dates only, and on the rest hours later.
 */
export type PullScope = 'all' | { bands: readonly string[]; storedEnabledEventIds: ReadonlySet<string> };

/**
 * The bands a pull covers: of `bands`, those asked for (all of them for 'all') that the horizon holds. The
 * configured bands are clipped to the horizon already (config/variables-sync.ts); clipping again here keeps a
 * band no date falls in out of the pull whatever the caller passes.
 */
export function bandsPulled(
  bands: readonly CadenceBand[],
  horizonDays: number,
  asked: readonly string[] | 'all',
): CadenceBand[] {
  const inHorizon = bandsWithin(bands, horizonDays);
  return asked === 'all' ? inHorizon : inHorizon.filter((band) => asked.includes(band.name));
}

function enabledSetChanged(stored: ReadonlySet<string>, pulled: readonly EventType[]): boolean {
  const enabled = new Set(pulled.filter((e) => e.enabled).map((e) => e.event_id));
  return enabled.size !== stored.size || [...enabled].some((id) => !stored.has(id));
}

export async function pullSnapshot(
  session: UpstreamSession,
  api: ApiClient,
  settings: PullSettings,
  now: Date,
  scope: PullScope = 'all',
): Promise<SnapshotInput> {
  const profile = await session.call('GET /users/me', (token) => api.getProfile(token));
  const eventTypes = await session.call('GET /events', (token) => api.listEventTypes(token));

  const zone = profile.timezone;
  const horizon = horizonFrom(now, zone, settings.horizonDays);
  const chosen = bandsPulled(
    settings.bands,
    settings.horizonDays,
    scope === 'all' || enabledSetChanged(scope.storedEnabledEventIds, eventTypes) ? 'all' : scope.bands,
  );
  const segments: BandSegment[] = chosen.map((band) => {
    const dates = datesOfBand(horizon, band);
    const windows = windowsCovering(
      { firstDate: dates[0]!, lastDate: dates.at(-1)!, dates },
      settings.overviewWindowDays,
    );
    return { band: band.name, dates, windows };
  });
  const schedule = stopOnFirstFailure(pLimit(settings.fetchConcurrency));

  const enabled = eventTypes.filter((e) => e.enabled);
  const pulls = await Promise.all(
    enabled.map((e) =>
      Promise.all(segments.map((segment) => pullSegment(session, api, schedule, e, zone, segment))),
    ),
  );

  return {
    profile: { payload: profile, email: profile.email, name: profile.name, timezone: zone },
    eventTypes: eventTypes.map((e) => ({
      upstreamEventId: e.event_id,
      title: e.title,
      durationMinutes: e.duration_minutes,
      enabled: e.enabled,
      secret: e.is_secret === true,
      url: e.url,
      color: e.color,
      payload: e,
    })),
    overviews: enabled.flatMap((e, i) =>
      segments.map((segment, j) => ({
        upstreamEventId: e.event_id,
        band: segment.band,
        payload: pulls[i]?.[j]?.overviewPayload,
      })),
    ),
    slots: pulls.flatMap((perSegment) => perSegment.flatMap((p) => p.slots)),
    // A stored slot dated outside the horizon was not looked for: it closed because the window moved. One
    // dated inside it but outside the pulled bands was not looked at either, and stays as it was.
    horizon: {
      zone,
      dates: horizon.dates,
      bandNames: settings.bands.map((band) => band.name),
      bands: segments.map((segment, j) => ({
        name: segment.band,
        dates: segment.dates,
        calls: pulls.reduce((sum, perSegment) => sum + (perSegment[j]?.calls ?? 0), 0),
      })),
    },
  };
}
