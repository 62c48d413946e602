// Two kinds of band label reach the same dashboards: cadence bands (SYNC_BANDS, config/sync-bands.ts), named by
// the dates they cover, on the scheduler's and worker's metrics, job data and stored state; and the fixed report
// bands (lib/date-bands.ts), by how far ahead a slot starts, on the staleness metric and the sync-health report.
// An operator reading `band="7d+"` must know which one it is: no configuration may produce a cadence band label
// that is also a report band's.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { parseCadenceBands } from '../../src/config/sync-bands.js';
import { DATE_BANDS } from '../../src/lib/date-bands.js';

/** A valid SYNC_BANDS: growing day boundaries, each with an interval, and the rest of the horizon last. */
const syncBands = fc
  .tuple(
    fc.uniqueArray(fc.integer({ min: 1, max: 60 }), { maxLength: 5 }),
    fc.array(fc.constantFrom('90s', '10m', '40m', '3h'), { minLength: 6, maxLength: 6 }),
  )
  .map(([days, intervals]) =>
    [...[...days].sort((a, b) => a - b).map((day, i) => `${day}d=${intervals[i]}`), `*=${intervals[5]}`].join(
      ',',
    ),
  );

function cadenceNames(text: string): string[] {
  const parsed = parseCadenceBands(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.bands.map((band) => band.name);
}

describe('band labels', () => {
  const reportNames: readonly string[] = DATE_BANDS.map((band) => band.name);

  it('name no cadence band as a report band, whatever SYNC_BANDS says', () => {
    fc.assert(
      fc.property(syncBands, (text) => {
        for (const name of cadenceNames(text))
          expect([text, reportNames.includes(name)]).toEqual([text, false]);
      }),
    );
  });

  it('name cadence bands by the dates they cover, day 0 being today', () => {
    expect(cadenceNames('4d=10m,7d=40m,*=3h')).toEqual(['days 0-3', 'days 4-6', 'days 7+']);
    expect(cadenceNames('1d=5m,2d=10m,*=1h')).toEqual(['day 0', 'day 1', 'days 2+']);
    expect(cadenceNames('*=15m')).toEqual(['days 0+']);
  });

  it('keep the report bands as the dashboards and alert rules know them', () => {
    expect(reportNames).toEqual(['0-24h', '1-3d', '3-7d', '7d+']);
  });
});
