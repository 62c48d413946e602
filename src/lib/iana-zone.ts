// Is this an IANA time zone name? luxon answers by building an Intl.DateTimeFormat, which profiling showed to be
// a few per cent of a sync's CPU (every overview and slot list names its zone). The answer for a name never
// changes, so it is remembered; the memory is bounded because names can come from an untrusted payload.
import { IANAZone } from 'luxon';

const MAX_REMEMBERED = 1000;
const validity = new Map<string, boolean>();

export function isIanaZoneName(name: string): boolean {
  let valid = validity.get(name);
  if (valid === undefined) {
    valid = IANAZone.isValidZone(name);
    if (validity.size >= MAX_REMEMBERED) validity.clear();
    validity.set(name, valid);
  }
  return valid;
}
