// How far ahead a slot is, in report bands: the nearer a slot, the likelier it is booked soon, and the more a
// stale picture of it costs. Declared once: the staleness metric, its alert rules and the dashboard use these
// names. A pure declaration kept in lib/ because the sync commit (store/plan-commit.ts) records changes by band
// and the sync-health report reads them back by band. Fixed hours ahead, whatever SYNC_BANDS says; the cadence
// bands (config/sync-bands.ts) are named by the dates they cover ("days 0-3"), so no label means both.

export const DATE_BANDS = [
  { name: '0-24h', untilHours: 24 },
  { name: '1-3d', untilHours: 72 },
  { name: '3-7d', untilHours: 168 },
  { name: '7d+', untilHours: Infinity },
] as const;

export type DateBand = (typeof DATE_BANDS)[number]['name'];

/** The band of a slot starting at `startsAt`, seen at `now` (a slot already started is in the nearest band). */
export function dateBandOf(startsAt: Date, now: Date): DateBand {
  const hours = (startsAt.getTime() - now.getTime()) / 3_600_000;
  return DATE_BANDS.find((band) => hours < band.untilHours)!.name;
}
