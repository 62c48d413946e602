// The VFREEBUSY renderer: strict iCalendar, FBTYPE FREE/BUSY only, UTC periods sorted and merged, same bytes
// for the same input.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import ICAL from 'ical.js-v2';
import { renderFreeBusy } from '../../src/feeds/free-busy.js';

const T0 = Date.parse('2026-03-02T00:00:00Z');
const at = (minute: number) => new Date(T0 + minute * 60_000);
const intervals = fc.array(
  fc.tuple(fc.integer({ min: -60, max: 1500 }), fc.integer({ min: 1, max: 240 })).map(([s, len]) => ({
    startsAt: at(s),
    endsAt: at(s + len),
  })),
  { maxLength: 15 },
);
const input = (free: { startsAt: Date; endsAt: Date }[], busy: { startsAt: Date; endsAt: Date }[]) => ({
  uid: 'abc@slotfeed',
  stamp: at(0),
  windowStart: at(0),
  windowEnd: at(1440),
  free,
  busy,
});
const PERIOD = /^FREEBUSY;FBTYPE=(FREE|BUSY):(\d{8}T\d{6}Z)\/(\d{8}T\d{6}Z)$/;

describe('renderFreeBusy', () => {
  it('writes one VFREEBUSY that strict parsers read, with UTC periods inside the window, sorted and merged', () => {
    fc.assert(
      fc.property(intervals, intervals, (free, busy) => {
        const text = renderFreeBusy(input(free, busy));
        expect(text.endsWith('\r\n')).toBe(true);
        expect(text.split('\r\n').every((line) => Buffer.byteLength(line) <= 75)).toBe(true);
        const unfolded = text.replace(/\r\n /g, '').split('\r\n').filter(Boolean);
        const vfreebusy = new ICAL.Component(ICAL.parse(text)).getFirstSubcomponent('vfreebusy')!;
        expect(vfreebusy.getFirstPropertyValue('uid')).toBe('abc@slotfeed');
        for (const type of ['FREE', 'BUSY'] as const) {
          const periods = unfolded.flatMap((line) => {
            const m = PERIOD.exec(line);
            return m && m[1] === type ? [[m[2]!, m[3]!] as const] : [];
          });
          for (const [start, end] of periods) expect(start < end).toBe(true);
          for (let i = 1; i < periods.length; i++) expect(periods[i - 1]![1] < periods[i]![0]).toBe(true);
          for (const [start, end] of periods) {
            expect(start >= '20260302T000000Z' && end <= '20260303T000000Z').toBe(true);
          }
        }
        expect(unfolded.filter((l) => l.startsWith('FREEBUSY')).every((l) => PERIOD.test(l))).toBe(true);
        expect(renderFreeBusy(input(free, busy))).toBe(text);
      }),
    );
  });

  it('joins touching periods and names the window in UTC', () => {
    const text = renderFreeBusy(
      input(
        [
          { startsAt: at(60), endsAt: at(90) },
          { startsAt: at(90), endsAt: at(120) },
        ],
        [{ startsAt: at(120), endsAt: at(150) }],
      ),
    );
    expect(text).toContain('DTSTART:20260302T000000Z\r\nDTEND:20260303T000000Z\r\n');
    expect(text).toContain('FREEBUSY;FBTYPE=FREE:20260302T010000Z/20260302T020000Z\r\n');
    expect(text).toContain('FREEBUSY;FBTYPE=BUSY:20260302T020000Z/20260302T023000Z\r\n');
    expect(text).not.toMatch(/ORGANIZER|METHOD/);
  });
});
