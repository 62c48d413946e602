// Reading a stored event's UID and slotfeed's marker: what decides which events slotfeed may change or delete.
import { describe, expect, it } from '@jest/globals';
import { FEED_MARKER_PROPERTY, readEventIdentity } from '../../src/caldav/index.js';

const wrap = (...lines: string[]) =>
  ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//x//y//EN', ...lines, 'END:VCALENDAR', ''].join('\r\n');

describe('readEventIdentity', () => {
  it("reads the VEVENT's UID and marker", () => {
    const text = wrap('BEGIN:VEVENT', 'UID:free-1@slotfeed', `${FEED_MARKER_PROPERTY}:feed-7`, 'END:VEVENT');
    expect(readEventIdentity(text)).toEqual({ uid: 'free-1@slotfeed', feedId: 'feed-7' });
  });

  it("a person's own event has no marker", () => {
    expect(readEventIdentity(wrap('BEGIN:VEVENT', 'UID:dentist', 'SUMMARY:Dentist', 'END:VEVENT'))).toEqual({
      uid: 'dentist',
      feedId: undefined,
    });
  });

  it('unfolds folded lines, skips parameters, unescapes text, reads names in any case', () => {
    const text = wrap(
      'BEGIN:VEVENT',
      'UID:free-2',
      ' @slotfeed',
      'x-slotfeed-feed;X-NOTE="a:b;c":feed\\,',
      '\t8',
      'END:VEVENT',
    );
    expect(readEventIdentity(text)).toEqual({ uid: 'free-2@slotfeed', feedId: 'feed,8' });
  });

  it("a marker or UID inside an alarm or a time zone is not the event's", () => {
    const text = wrap(
      'BEGIN:VTIMEZONE',
      'TZID:Europe/Berlin',
      `${FEED_MARKER_PROPERTY}:feed-tz`,
      'END:VTIMEZONE',
      'BEGIN:VEVENT',
      'UID:own',
      'BEGIN:VALARM',
      'UID:alarm-uid',
      `${FEED_MARKER_PROPERTY}:feed-alarm`,
      'END:VALARM',
      'END:VEVENT',
    );
    expect(readEventIdentity(text)).toEqual({ uid: 'own', feedId: undefined });
  });

  it('no VEVENT, or one without a UID: nothing', () => {
    expect(readEventIdentity(wrap('BEGIN:VTODO', 'UID:todo', 'END:VTODO'))).toBeUndefined();
    expect(readEventIdentity(wrap('BEGIN:VEVENT', 'SUMMARY:x', 'END:VEVENT'))).toBeUndefined();
    expect(readEventIdentity('not a calendar')).toBeUndefined();
  });
});
