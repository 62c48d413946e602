// One band's part of a pull, for each event type: the band's dates, the overview windows spanning them, and what
// asking for them brought back, through the overviews or each date's slot list directly (pull-plan.ts says which),
// each payload checked for what the schema cannot see (a slot nowhere near its date, an overview in another zone).
// Every request of a pull goes through one limit, and the first failure stops the rest.
import { dateAfter, startOfDateIn } from '../lib/zone-days.js';
import pLimit, { type LimitFunction } from 'p-limit';
import {
  formatIssuePath,
  UpstreamInvalidPayloadError,
  type ApiClient,
  type Overview,
} from '../upstream/index.js';
import { isSameZone } from '../upstream/iso-values.js';
import { bandsWithin, type CadenceBand } from '../config/sync-bands.js';
import { datesByBand, spanOf } from './cadence-bands.js';
import { windowsCovering, type Horizon, type OverviewWindow } from './horizon-windows.js';
import { segmentCalls, type SegmentMode } from './pull-plan.js';
import type { UpstreamSession } from './upstream-session.js';

export interface PullSettings {
  horizonDays: number;
  /** SYNC_BANDS: the horizon cut into bands by bookable days (cadence-bands.ts), each pulled on its own interval. */
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
  const earliest = startOfDateIn(dateAfter(date, -1), zone);
  const latest = startOfDateIn(dateAfter(date, 2), zone);
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
export interface BandSegment {
  band: string;
  dates: string[];
  windows: OverviewWindow[];
}

/** What one event type's part of one band brought back. */
export interface SegmentPull {
  /** The overviews read, as stored; absent when the dates were asked for directly. */
  overviewPayload?: unknown;
  /** Slot starts, `YYYY-MM-DDTHH:mm:ss.sssZ`. */
  starts: string[];
  calls: number;
}

type Schedule = <T>(task: () => Promise<T>) => Promise<T>;

/** The slot lists of `dates`, each checked inside its scheduled call (a stray slot stops the pull like a failure). */
function slotListsOf(
  session: UpstreamSession,
  api: ApiClient,
  schedule: Schedule,
  eventId: string,
  zone: string,
  dates: readonly string[],
): Promise<string[][]> {
  return Promise.all(
    dates.map((date) =>
      schedule(async () => {
        const list = await session.call('GET /calendars/{event_id}/slots', (token) =>
          api.getSlots(token, eventId, { date, timezone: zone }),
        );
        checkSlotsNearDate(list.starts, date, zone);
        return list.starts;
      }),
    ),
  );
}

async function pullSegment(
  session: UpstreamSession,
  api: ApiClient,
  schedule: Schedule,
  eventId: string,
  zone: string,
  segment: BandSegment,
  mode: SegmentMode,
): Promise<SegmentPull> {
  // A band with no date this time (cadence-bands.ts) asks nothing and keeps its stored overview.
  if (segment.dates.length === 0) return { starts: [], calls: 0 };
  if (mode === 'direct') {
    const lists = await slotListsOf(session, api, schedule, eventId, zone, segment.dates);
    return { starts: lists.flat(), calls: segmentCalls('direct', segment.dates.length, 0, 0) };
  }
  const { windows } = segment;
  const overviews: Overview[] = await Promise.all(
    windows.map((w) =>
      schedule(async () => {
        const overview = await session.call('GET /calendars/{event_id}', (token) =>
          api.getOverview(token, eventId, { startDate: w.startDate, timezone: zone, period: w.period }),
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
  const lists = await slotListsOf(session, api, schedule, eventId, zone, availableDates);
  // The overviews as the service sent them (their schema transforms nothing), in the zone they were asked in.
  const overviewPayload = {
    timezone: zone,
    windows: windows.map((w, i) => ({ startDate: w.startDate, period: w.period, overview: overviews[i] })),
  };
  return {
    overviewPayload,
    starts: lists.flat(),
    calls: segmentCalls('overview', segment.dates.length, windows.length, availableDates.length),
  };
}

/**
 * Once one call of a pull has failed the attempt is over (Promise.all has rejected), but p-limit would
 * still run every queued call: a failed sync would go on spending the shared upstream rate limit for
 * nothing, after its job was already reported failed. Queued calls are dropped instead; calls already in
 * flight finish on their own.
 */
function stopOnFirstFailure(limit: LimitFunction): Schedule {
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

export interface PulledEventType {
  id: string;
  durationMinutes: number;
}

/**
 * Each band's part of the pull: its dates (counted in open dates when `bookable` says which they are), and the
 * overview windows spanning them. A band's dates need not be consecutive (a weekend with nothing open between
 * two bookable days stays in the band of its calendar distance); its windows span the gap, and only the band's
 * own dates are asked for. A band may have no date at all (fewer open dates than it starts at): it costs nothing.
 */
export function segmentsOf(
  settings: PullSettings,
  horizon: Horizon,
  bands: readonly CadenceBand[],
  bookable?: ReadonlySet<string>,
): BandSegment[] {
  const byBand = datesByBand(horizon, bandsWithin(settings.bands, settings.horizonDays), bookable);
  return bands.map((band) => {
    const dates = byBand.get(band.name) ?? [];
    const span = spanOf(horizon, dates);
    const windows =
      span.length === 0
        ? []
        : windowsCovering(
            { firstDate: span[0]!, lastDate: span.at(-1)!, dates: span },
            settings.overviewWindowDays,
          );
    return { band: band.name, dates, windows };
  });
}

/** Per event type (in order), per segment (in order), what its part of the pull brought back. */
export function pullSegments(
  session: UpstreamSession,
  api: ApiClient,
  settings: PullSettings,
  zone: string,
  segments: readonly BandSegment[],
  modeOf: (eventId: string, segment: BandSegment) => SegmentMode,
  what: { eventTypes: readonly PulledEventType[] },
): Promise<SegmentPull[][]> {
  const schedule = stopOnFirstFailure(pLimit(settings.fetchConcurrency));
  return Promise.all(
    what.eventTypes.map((e) =>
      Promise.all(
        segments.map((segment) =>
          pullSegment(session, api, schedule, e.id, zone, segment, modeOf(e.id, segment)),
        ),
      ),
    ),
  );
}
