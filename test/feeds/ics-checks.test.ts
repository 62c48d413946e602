// The strict checks must catch each defect they claim to, or every feed test that relies on them proves nothing.
import { describe, expect, it } from '@jest/globals';
import { renderFeed } from '../../src/feeds/render-feed.js';
import { assertStrictIcs } from '../support/ics-checks.js';
import { renderInput, slot } from './feed-fixtures.js';

const good = renderFeed(
  renderInput({
    slots: [slot('ev-intro', '2026-03-02T10:00:00Z'), slot('ev-intro', '2026-03-02T11:00:00Z')],
  }),
);

/** `good` with its first match of `from` replaced. */
const broken = (from: string | RegExp, to: string) => {
  const result = good.replace(from, to);
  if (result === good) throw new Error(`fixture did not change: ${String(from)}`);
  return result;
};

describe('assertStrictIcs', () => {
  it('accepts a feed slotfeed renders', () => {
    expect(() => assertStrictIcs(good)).not.toThrow();
  });

  it.each<[string, () => string, RegExp]>([
    ['bare LF line ends', () => good.replace(/\r\n/g, '\n'), /line 1: LF without CR/],
    ['one bare LF', () => broken('\r\nSEQUENCE', '\nSEQUENCE'), /line \d+: LF without CR/],
    ['no CRLF after the last line', () => good.slice(0, -2), /must end with "END:VCALENDAR" \+ CRLF/],
    [
      'a line over 75 octets',
      () => broken('SUMMARY:Intro call', `SUMMARY:${'é'.repeat(40)}`),
      /line \d+: 88 octets, more than 75/,
    ],
    ['an empty line', () => broken('\r\nSEQUENCE', '\r\n\r\nSEQUENCE'), /line \d+: empty line/],
    [
      'a character split across a fold',
      () => broken('SUMMARY:Intro call', 'SUMMARY:Intro \uD83C\r\n \uDF89'),
      /split \(lone UTF-16 surrogate\)/,
    ],
    [
      'a second UID',
      () => broken(/(UID:[^\r]+)\r\n/, '$1\r\n$1\r\n'),
      /VEVENT #1: 2 UID properties, expected exactly 1/,
    ],
    ['no DTSTAMP', () => broken(/DTSTAMP:[^\r]+\r\n/, ''), /VEVENT #1: 0 DTSTAMP properties/],
    [
      'a duplicate UID',
      () => {
        const uids = [...good.matchAll(/UID:([^\r]+)/g)].map((m) => m[1] ?? '');
        return good.replace(uids[1] ?? '', uids[0] ?? '');
      },
      /VEVENT #2 \(UID [0-9a-f]+@slotfeed\): UID already used by VEVENT #1/,
    ],
    [
      'DTEND before DTSTART',
      () => broken('DTEND:20260302T103000Z', 'DTEND:20260302T095900Z'),
      /DTEND 2026-03-02T09:59:00Z is not after DTSTART/,
    ],
    [
      'DTEND equal to DTSTART',
      () => broken('DTEND:20260302T103000Z', 'DTEND:20260302T100000Z'),
      /is not after DTSTART/,
    ],
    [
      'an opaque event',
      () => broken('TRANSP:TRANSPARENT', 'TRANSP:OPAQUE'),
      /X-MICROSOFT-CDO-BUSYSTATUS is FREE with TRANSP:OPAQUE/,
    ],
    [
      'a floating time',
      () => broken('DTSTART:20260302T100000Z', 'DTSTART:20260302T100000'),
      /DTSTART "20260302T100000" is not a UTC date-time/,
    ],
    [
      'a line ical.js cannot parse',
      () => broken('\r\nSEQUENCE', '\r\nNOT A PROPERTY\r\nSEQUENCE'),
      /ICAL\.parse threw/,
    ],
  ])('rejects %s with a message naming it', (_name, make, message) => {
    expect(() => assertStrictIcs(make())).toThrow(message);
  });
});
