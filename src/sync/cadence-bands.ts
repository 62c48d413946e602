// What sync/ does with the cadence bands (declared and parsed with the settings, config/sync-bands.ts): the
// dates of a band in one horizon, and a band's nearest-first rank.
import type { CadenceBand } from '../config/sync-bands.js';
import type { Horizon } from './horizon-windows.js';

/** The horizon's dates that fall in `band`. */
export function datesOfBand(horizon: Horizon, band: CadenceBand): string[] {
  return horizon.dates.slice(band.fromDay, Math.min(band.toDay, horizon.dates.length));
}

/** The nearest-first rank of a band by name; unknown names (a band since removed from the config) rank last. */
export function bandRank(bands: readonly CadenceBand[], name: string): number {
  const index = bands.findIndex((band) => band.name === name);
  return index === -1 ? bands.length : index;
}
