// The stand-in a report names for a zone Postgres does not know (store/report-queries/report-zones.ts): one it
// knows that keeps the same time, as luxon reads both, or none (and the report says so).
import { describe, expect, it } from '@jest/globals';
import { postgresZoneFor } from '../../src/store/report-queries/report-zones.js';

const AT = new Date('2026-03-30T06:00:00Z');
const KNOWN = new Set([
  'UTC',
  'America/Los_Angeles',
  'America/Denver',
  'America/Phoenix',
  'Europe/Kiev',
  'Europe/Berlin',
]);

describe('postgresZoneFor', () => {
  it('keeps a zone Postgres knows', () => {
    expect(postgresZoneFor('Europe/Berlin', KNOWN, AT)).toBe('Europe/Berlin');
  });

  it('names an old alias by ICU’s own name for it', () => {
    expect(postgresZoneFor('US/Pacific-New', KNOWN, AT)).toBe('America/Los_Angeles');
    expect(postgresZoneFor('Europe/Kyiv', KNOWN, AT)).toBe('Europe/Kiev');
  });

  it('names a new zone by one with the same offsets on every day of the three years around the report', () => {
    // Ciudad Juárez has kept Mountain time with US DST since November 2022: Denver's, not Phoenix's.
    expect(postgresZoneFor('America/Ciudad_Juarez', KNOWN, AT)).toBe('America/Denver');
    // In November 2022 it kept −6 for a month, as no zone here did: none kept its time over those years.
    expect(postgresZoneFor('America/Ciudad_Juarez', KNOWN, new Date('2023-06-01T00:00:00Z'))).toBeUndefined();
  });

  it('finds none for a zone whose time no known zone keeps', () => {
    expect(postgresZoneFor('Asia/Kathmandu', KNOWN, AT)).toBeUndefined();
  });

  it('finds none, and does not throw, for a zone ICU does not know either', () => {
    expect(postgresZoneFor('Mars/Olympus_Mons', KNOWN, AT)).toBeUndefined();
  });
});
