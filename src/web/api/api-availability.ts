// The JSON API's answers: the range asked for (rangeOf), and the availability serving computes over it
// (serving/availability.ts: the same free blocks, slots, busy time and team maths as the feeds), read within
// the credential's scope (api-scope.ts) and shaped as the schemas say (api-schemas.ts).
import { DateTime } from 'luxon';
import type { z } from 'zod';
import * as availability from '../../serving/availability.js';
import type { FeedWindow } from '../../serving/feed-window.js';
import { memberName } from '../../feeds/team-feed-events.js';
import type { FeedContentStore } from '../../store/feed-content.js';
import { HttpError } from '../http-error.js';
import type { ApiScope, TeamView } from './api-scope.js';
import { MAX_RANGE_DAYS, type availabilityResponse, type teamAvailabilityResponse } from './api-schemas.js';

export interface ApiRange extends FeedWindow {
  zone: string;
  from: string;
  to: string;
  /** The start of today in the zone: the default range moves then, with no write at all. */
  todayStart: Date;
}

/** The range asked for, in whole days of `zone`; 400 when it is backwards or longer than a year. */
export function rangeOf(
  query: { from?: string | undefined; to?: string | undefined },
  zone: string,
  now: Date,
): ApiRange {
  const today = DateTime.fromJSDate(now, { zone }).startOf('day');
  const from = query.from === undefined ? today : DateTime.fromISO(query.from, { zone }).startOf('day');
  const to =
    query.to === undefined ? from.plus({ days: 6 }) : DateTime.fromISO(query.to, { zone }).startOf('day');
  if (!from.isValid || !to.isValid) throw new HttpError(400, '`from` and `to` must be dates, YYYY-MM-DD.');
  const days = Math.round(to.diff(from, 'days').days) + 1;
  if (days < 1) throw new HttpError(400, '`to` is before `from`.');
  if (days > MAX_RANGE_DAYS)
    throw new HttpError(400, `A range covers at most ${MAX_RANGE_DAYS} days; ask in parts.`);
  const fromDate = from.toISODate()!;
  const toDate = to.toISODate()!;
  return {
    zone,
    from: fromDate,
    to: toDate,
    windowStart: from.toJSDate(),
    windowEnd: to.plus({ days: 1 }).toJSDate(),
    windowKey: `${fromDate}/${toDate}/${zone}`,
    todayStart: today.toJSDate(),
  };
}

const inZone = (zone: string) => (date: Date) => DateTime.fromJSDate(date, { zone }).toISO()!;

export async function connectionAvailability(
  store: FeedContentStore,
  input: {
    connectionId: string;
    scope: ApiScope;
    /** The `eventType` asked for, if any. */
    eventType: string | undefined;
    range: (zone: string | null) => ApiRange;
    now: Date;
  },
): Promise<{ body: z.input<typeof availabilityResponse>; changedAt: Date | null; range: ApiRange }> {
  const { scope } = input;
  // The zone may default to the account's: the range is settled once it is known.
  const { range, connection, free, slots, busy } = await availability.connectionAvailability(store, {
    connectionId: input.connectionId,
    eventTypeFrom: (current) => scope.eventTypeFor(input.eventType, current),
    rangeIn: input.range,
    days: scope.days,
    withBusy: scope.parts.busy,
    now: input.now,
  });
  const at = inZone(range.zone);
  return {
    range,
    changedAt: connection.feedChangedAt,
    body: {
      connectionId: connection.id,
      zone: range.zone,
      from: range.from,
      to: range.to,
      status: connection.status,
      lastChanged: connection.feedChangedAt?.toISOString() ?? null,
      free: scope.parts.free
        ? free.map((b) => ({ start: at(b.startsAt), end: at(b.endsAt), eventTypes: [...b.eventIds].sort() }))
        : [],
      slots: scope.parts.slots
        ? slots.map((s) => ({ start: at(s.startsAt), end: at(s.endsAt), eventType: s.eventId }))
        : [],
      busy: scope.parts.busy ? busy.map((b) => ({ start: at(b.startsAt), end: at(b.endsAt) })) : [],
    },
  };
}

export async function teamAvailability(
  store: FeedContentStore,
  input: { teamId: string; view: TeamView; days: number | null; range: ApiRange; now: Date },
): Promise<{ body: z.input<typeof teamAvailabilityResponse>; changedAt: Date }> {
  const { range, view } = input;
  const { team, blocks, changedAt } = await availability.teamAvailability(store, {
    teamId: input.teamId,
    minimumMinutes: view.minimumMinutes,
    days: input.days,
    range,
    now: input.now,
  });
  const at = inZone(range.zone);
  return {
    changedAt,
    body: {
      teamId: team.id,
      name: team.name,
      zone: range.zone,
      from: range.from,
      to: range.to,
      mode: view.mode,
      minimumMinutes: view.minimumMinutes,
      members: team.members.map((m) => ({
        name: memberName(m.displayName),
        status: m.status,
        lastChanged: m.feedChangedAt?.toISOString() ?? null,
      })),
      blocks: blocks.map((b) => ({
        start: at(b.startsAt),
        end: at(b.endsAt),
        free: b.free.map((m) => m.name),
      })),
    },
  };
}
