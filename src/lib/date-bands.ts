// How far ahead a slot is, in bands: the nearer a slot, the likelier it is booked soon, and the more a stale
// picture of it costs. Declared once: the staleness metric, its alert rules and the dashboard use these names.
// A pure declaration kept in lib/ because the sync commit (store/snapshots.ts) records changes by band and the
// sync-health report reads them back by band: neither should reach into sync/ for it. (The cadence bands,
// sync/cadence-bands.ts, are a second vocabulary, to be unified with this one.)

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
