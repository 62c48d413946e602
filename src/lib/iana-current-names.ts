// The names ICU (and so Chromium, and Node's zone list) still reports for zones IANA has since renamed: a browser
// in India says Asia/Calcutta, Node lists Africa/Asmera and America/Catamarca. Pages show the current name. The
// mapping is CLDR's own (its BCP 47 time zone data, the cldr-bcp47 package): each zone's aliases, ICU's name
// first, and its `_iana` preferred name. A hand-kept list missed some (issue 44).
import { createRequire } from 'node:module';

interface CldrZone {
  _alias?: string;
  _iana?: string;
}

const require = createRequire(import.meta.url);
const cldrZones = (
  require('cldr-bcp47/bcp47/timezone.json') as { keyword: { u: { tz: Record<string, CldrZone | string> } } }
).keyword.u.tz;

/** Every alias of a zone IANA names otherwise → IANA's current name. */
export const CURRENT_ZONE_NAMES: ReadonlyMap<string, string> = new Map(
  Object.values(cldrZones).flatMap((zone) => {
    if (typeof zone !== 'object' || zone._iana === undefined || zone._alias === undefined) return [];
    const iana = zone._iana;
    return zone._alias
      .split(' ')
      .filter((alias) => alias !== iana)
      .map((alias) => [alias, iana] as const);
  }),
);
