// What one sync asks the scheduling service, and nothing more: the account (the profile, for the time zone,
// and the event types), and for each enabled event type and each band pulled the slots of the band's dates:
// through the overview windows covering them and the slots of every date those overviews call available, or
// (a scheduled pull, when the store says that is fewer calls) each date's slot list directly. A first sync
// and one asked for read everything through the overviews: 2 + Σ(windows + available dates) calls, the
// minimum the API allows for the dates they pull. A scheduled pull reads the account on its own cadence and
// when what it pulled calls for it (pull-plan.ts says when, and why nothing is missed). A band is asked for
// in windows of its own, so each band's overview is stored, and replaced, whole. Every payload has been
// validated by the upstream client before it reaches this module.
import { DateTime } from 'luxon';
import { localDateOf } from '../lib/zone-days.js';
import type { SnapshotInput } from '../store/snapshots.js';
import type { FetchedSlot } from '../store/slot-diff.js';
import type { StoredEventType, StoredOpenSlot } from '../store/pull-basis.js';
import { UpstreamError, type ApiClient, type EventType, type Profile } from '../upstream/index.js';
import { isSameZone } from '../upstream/iso-values.js';
import { bandsWithin, type CadenceBand } from '../config/sync-bands.js';
import { horizonFrom, type Horizon } from './horizon-windows.js';
import { segmentMode } from './pull-plan.js';
import {
  pullSegments,
  segmentsOf,
  type BandSegment,
  type PulledEventType,
  type PullSettings,
  type SegmentPull,
} from './pull-segments.js';
import type { UpstreamSession } from './upstream-session.js';

export type { PullSettings } from './pull-segments.js';

/** What the store holds that a scheduled pull plans by (store/pull-basis.ts). */
export interface StoredAccount {
  /** The zone the account was last read in. */
  zone: string;
  /** The event types as last read, enabled or not. */
  eventTypes: readonly StoredEventType[];
  /** Whether this pull reads the account anyway: its cadence has come (pull-plan.ts, accountReadDue). */
  readAccount: boolean;
  /** The stored open slots starting in [from, until). */
  openSlotsBetween(from: Date, until: Date): Promise<StoredOpenSlot[]>;
  /** The dates (in `zone`) holding a stored open slot that starts in [from, until): what bands count. */
  openDates(from: Date, until: Date): Promise<Set<string>>;
}

/**
 * What to pull: every band, the account and every overview (a first or a forced sync), or the bands named (a
 * scheduled partial sync), planned by what the store holds. A partial pull whose read of the account finds
 * another zone or another set of enabled event types (one new or enabled again, one disabled or removed) pulls
 * as a whole sync does: a newly enabled type's slots would otherwise open on the pulled bands' dates only,
 * and on the rest hours later.
 */
export type PullScope = 'all' | { bands: readonly string[]; stored: StoredAccount };

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

interface Account {
  profile: Profile;
  eventTypes: EventType[];
}

/** The event types a pull asks slots for: id and duration (a slot's end). */

/** Whether the account as read differs from the stored one in what a partial pull is planned on. */
function accountMoved(stored: StoredAccount, account: Account): boolean {
  const storedEnabled = new Set(stored.eventTypes.filter((e) => e.enabled).map((e) => e.upstreamEventId));
  const enabled = new Set(account.eventTypes.filter((e) => e.enabled).map((e) => e.event_id));
  return (
    !isSameZone(account.profile.timezone, stored.zone) ||
    enabled.size !== storedEnabled.size ||
    [...enabled].some((id) => !storedEnabled.has(id))
  );
}

const isNotFound = (error: unknown) => error instanceof UpstreamError && error.code === 'not_found';

export async function pullSnapshot(
  session: UpstreamSession,
  api: ApiClient,
  settings: PullSettings,
  now: Date,
  scope: PullScope = 'all',
): Promise<SnapshotInput> {
  const readAccount = async (): Promise<Account> => ({
    profile: await session.call('GET /users/me', (token) => api.getProfile(token)),
    eventTypes: await session.call('GET /events', (token) => api.listEventTypes(token)),
  });
  const whole = async (account: Account) => {
    const horizon = horizonFrom(now, account.profile.timezone, settings.horizonDays);
    const segments = segmentsOf(settings, horizon, bandsPulled(settings.bands, settings.horizonDays, 'all'));
    const pulled = await pullSegments(
      session,
      api,
      settings,
      account.profile.timezone,
      segments,
      () => 'overview',
      {
        eventTypes: enabledOf(account),
      },
    );
    const zone = account.profile.timezone;
    return snapshotOf(settings, { account, zone, horizon, segments, asked: enabledOf(account), pulled });
  };
  if (scope === 'all') return whole(await readAccount());

  const { stored } = scope;
  let account = stored.readAccount ? await readAccount() : undefined;
  if (account && accountMoved(stored, account)) return whole(account);
  const zone = stored.zone;
  const eventTypes = account
    ? enabledOf(account)
    : stored.eventTypes
        .filter((e) => e.enabled)
        .map((e) => ({ id: e.upstreamEventId, durationMinutes: e.durationMinutes }));
  const horizon = horizonFrom(now, zone, settings.horizonDays);
  // Bands count the dates people can book (cadence-bands.ts): those holding an open slot still to come.
  const bookable = await stored.openDates(
    now,
    DateTime.fromISO(horizon.lastDate, { zone }).plus({ days: 1 }).toJSDate(),
  );
  const segments = segmentsOf(
    settings,
    horizon,
    bandsPulled(settings.bands, settings.horizonDays, scope.bands),
    bookable,
  );
  const pulledDates = segments.flatMap((segment) => segment.dates).sort();
  const open =
    pulledDates.length === 0
      ? []
      : await stored.openSlotsBetween(
          DateTime.fromISO(pulledDates[0]!, { zone }).toJSDate(),
          DateTime.fromISO(pulledDates.at(-1)!, { zone }).plus({ days: 1 }).toJSDate(),
        );
  // The dates of each event type the store knows hold a slot still to come: inside the overview's range, and
  // available when last pulled.
  const future = open.filter((slot) => slot.startsAt.getTime() > now.getTime());
  const knownDates = new Map<string, Set<string>>();
  for (const slot of future) {
    const date = localDateOf(slot.startsAt, zone)!;
    const dates = knownDates.get(slot.eventId) ?? new Set<string>();
    knownDates.set(slot.eventId, dates.add(date));
  }
  const modeOf = (eventId: string, segment: BandSegment) => {
    const known = knownDates.get(eventId);
    const available = known ? segment.dates.filter((date) => known.has(date)).length : 0;
    return segmentMode(segment.dates.length, segment.windows.length, available);
  };

  let pulled: SegmentPull[][];
  try {
    pulled = await pullSegments(session, api, settings, zone, segments, modeOf, { eventTypes });
  } catch (error: unknown) {
    // A 404 for an event type the store knows: it may have been removed. Only the list of event types says.
    if (account || !isNotFound(error)) throw error;
    account = await readAccount();
    if (accountMoved(stored, account)) return whole(account);
    throw error;
  }
  if (!account && missedAny(future, eventTypes, segments, pulled, zone)) {
    // A stored slot missing from its date's fresh list was booked, or its event type was disabled or removed:
    // only the list of event types tells which, so it is read before the commit says why the slot closed.
    account = await readAccount();
    if (accountMoved(stored, account)) return whole(account);
  }
  return snapshotOf(settings, { account, zone, horizon, segments, asked: eventTypes, pulled });
}

function enabledOf(account: Account): PulledEventType[] {
  return account.eventTypes
    .filter((e) => e.enabled)
    .map((e) => ({ id: e.event_id, durationMinutes: e.duration_minutes }));
}

/** Whether a stored slot still to come, on a date the pull asked for, is missing from what it fetched. */
function missedAny(
  future: readonly StoredOpenSlot[],
  eventTypes: readonly PulledEventType[],
  segments: readonly BandSegment[],
  pulled: readonly SegmentPull[][],
  zone: string,
): boolean {
  const pulledDates = new Set(segments.flatMap((segment) => segment.dates));
  const fetched = new Set(
    eventTypes.flatMap((e, i) =>
      (pulled[i] ?? []).flatMap((segment) => segment.starts.map((start) => `${e.id} ${Date.parse(start)}`)),
    ),
  );
  const asked = new Set(eventTypes.map((e) => e.id));
  return future.some(
    (slot) =>
      asked.has(slot.eventId) &&
      pulledDates.has(localDateOf(slot.startsAt, zone)!) &&
      !fetched.has(`${slot.eventId} ${slot.startsAt.getTime()}`),
  );
}

/**
 * The snapshot to commit. Slot ends come from the account's durations when the pull read it (one that read it
 * late, because a slot went missing, found the same enabled set), else the stored ones it asked by.
 */
function snapshotOf(
  settings: PullSettings,
  pull: {
    account: Account | undefined;
    /** The zone the horizon's dates are in, the one the pull asked in. */
    zone: string;
    horizon: Horizon;
    segments: readonly BandSegment[];
    /** The event types asked for, in the order of `pulled`. */
    asked: readonly PulledEventType[];
    pulled: readonly SegmentPull[][];
  },
): SnapshotInput {
  const { account, zone, horizon, segments, asked, pulled } = pull;
  const durations = new Map((account ? enabledOf(account) : asked).map((e) => [e.id, e.durationMinutes]));
  const slots: FetchedSlot[] = asked.flatMap((e, i) => {
    const durationMs = (durations.get(e.id) ?? e.durationMinutes) * 60_000;
    return (pulled[i] ?? []).flatMap((segment) =>
      segment.starts.map((start) => {
        const startsAt = new Date(start);
        return { eventId: e.id, startsAt, endsAt: new Date(startsAt.getTime() + durationMs) };
      }),
    );
  });
  return {
    ...(account
      ? {
          profile: {
            payload: account.profile,
            email: account.profile.email,
            name: account.profile.name,
            timezone: account.profile.timezone,
          },
          eventTypes: account.eventTypes.map((e) => ({
            upstreamEventId: e.event_id,
            title: e.title,
            durationMinutes: e.duration_minutes,
            enabled: e.enabled,
            secret: e.is_secret === true,
            url: e.url,
            color: e.color,
            payload: e,
          })),
        }
      : {}),
    overviews: asked.flatMap((e, i) =>
      segments.flatMap((segment, j) => {
        const payload = pulled[i]?.[j]?.overviewPayload;
        return payload === undefined ? [] : [{ upstreamEventId: e.id, band: segment.band, payload }];
      }),
    ),
    slots,
    // A stored slot dated outside the horizon was not looked for: it closed because the window moved. One
    // dated inside it but outside the pulled bands was not looked at either, and stays as it was.
    horizon: {
      zone,
      dates: horizon.dates,
      bandNames: settings.bands.map((band) => band.name),
      bands: segments.map((segment, j) => ({
        name: segment.band,
        dates: segment.dates,
        calls: pulled.reduce((sum, perSegment) => sum + (perSegment[j]?.calls ?? 0), 0),
      })),
    },
  };
}
