import { describe, expect, it } from '@jest/globals';
import { renderFeed, slotUid } from '../../src/feeds/render-feed.js';
import { assertStrictIcs } from '../support/ics-checks.js';
import {
  at,
  CAFE,
  calendarLines,
  CONNECTION_ID,
  eventsOf,
  INTRO,
  renderInput,
  slot,
} from './feed-fixtures.js';

describe('renderFeed: validity', () => {
  it('passes the strict checks with emoji and accented titles and long texts folded by octets', () => {
    const ics = renderFeed(
      renderInput({
        calendarName: 'Zoë Ångström-Müller 🗓️ – Beratungstermine für Kundinnen und Kunden (free time)',
        description: `Free time of Zoë Ångström-Müller, from Calendbook. ${'Ünïcødé 🎉 '.repeat(20)}`,
      }),
    );
    expect(() => assertStrictIcs(ics)).not.toThrow();
    // Long lines really were folded, and every title survives unfolding intact.
    expect(ics.split('\r\n').some((line) => line.startsWith(' '))).toBe(true);
    const events = eventsOf(ics);
    expect(events.filter((e) => e.get('SUMMARY') === CAFE.title)).toHaveLength(1);
    expect(calendarLines(ics)).toContain(
      'X-WR-CALNAME:Zoë Ångström-Müller 🗓️ – Beratungstermine für Kundinnen und Kunden (free time)',
    );
  });

  it('escapes TEXT values the library writes raw (calendar name and description)', () => {
    const ics = renderFeed(renderInput({ calendarName: 'A, B; C\\D\nE', description: 'one,\ntwo;' }));
    assertStrictIcs(ics);
    const lines = calendarLines(ics);
    expect(lines).toContain('NAME:A\\, B\\; C\\\\D\\nE');
    expect(lines).toContain('X-WR-CALNAME:A\\, B\\; C\\\\D\\nE');
    expect(lines).toContain('X-WR-CALDESC:one\\,\\ntwo\\;');
  });

  it('drops control characters and lone surrogates from titles', () => {
    const ics = renderFeed(
      renderInput({
        eventTypes: new Map([['ev-intro', { ...INTRO, title: 'Bad\u0000\u0007 title \uD83D end' }]]),
        slots: [slot('ev-intro', '2026-03-02T10:00:00Z')],
      }),
    );
    assertStrictIcs(ics);
    expect(eventsOf(ics)[0]?.get('SUMMARY')).toBe('Bad title \uFFFD end');
  });

  it('writes the calendar properties: PRODID, no METHOD, NAME, refresh interval from the sync interval', () => {
    const lines = calendarLines(renderFeed(renderInput({ refreshIntervalSeconds: 1800 })));
    expect(lines).toEqual([
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'PRODID:-//slotfeed//slotfeed//EN',
      'CALSCALE:GREGORIAN',
      'NAME:Linus Turing – free time',
      'X-WR-CALNAME:Linus Turing – free time',
      'X-WR-CALDESC:Free time of Linus Turing\\, from Calendbook. Data as of 2026-03-02 10:15 ' +
        '(Europe/Berlin)\\; refreshed about every 15 minutes.',
      'REFRESH-INTERVAL;VALUE=DURATION:PT30M',
      'X-PUBLISHED-TTL:PT30M',
      'END:VCALENDAR',
    ]);
  });

  it('is valid with no events at all', () => {
    const ics = renderFeed(renderInput({ slots: [] }));
    assertStrictIcs(ics);
    expect(eventsOf(ics)).toEqual([]);
  });
});

describe('renderFeed: events', () => {
  it('writes one transparent, confirmed VEVENT per slot with UTC times, booking link and colour', () => {
    const seen = at('2026-02-27T08:15:00.000Z');
    const changed = at('2026-03-01T17:45:00.000Z');
    const ics = renderFeed(
      renderInput({
        slots: [
          slot('ev-intro', '2026-03-02T10:00:00Z', 30, {
            sequence: 2,
            firstSeenAt: seen,
            lastChangedAt: changed,
          }),
        ],
      }),
    );
    const [event] = eventsOf(ics);
    expect(Object.fromEntries(event ?? [])).toEqual({
      UID: slotUid(CONNECTION_ID, 'ev-intro', at('2026-03-02T10:00:00Z')),
      SEQUENCE: '2',
      // Without METHOD, DTSTAMP is the last revision of the event's information, as LAST-MODIFIED.
      DTSTAMP: '20260301T174500Z',
      DTSTART: '20260302T100000Z',
      DTEND: '20260302T103000Z',
      SUMMARY: 'Intro call',
      TRANSP: 'TRANSPARENT',
      DESCRIPTION: `Open for booking: ${INTRO.url}`,
      'URL;VALUE=URI': INTRO.url,
      STATUS: 'CONFIRMED',
      'X-MICROSOFT-CDO-BUSYSTATUS': 'FREE',
      COLOR: 'mediumseagreen',
      'LAST-MODIFIED': '20260301T174500Z',
    });
  });

  it('keeps a CSS colour name, and leaves out URL and DESCRIPTION when there is no http(s) link', () => {
    const ics = renderFeed(
      renderInput({
        eventTypes: new Map([['ev-cafe', { ...CAFE, url: 'javascript:alert(1)' }]]),
        slots: [slot('ev-cafe', '2026-03-02T10:00:00Z', 60)],
      }),
    );
    const [event] = eventsOf(ics);
    expect(event?.get('COLOR')).toBe('teal');
    expect(event?.has('URL;VALUE=URI')).toBe(false);
    expect(event?.has('DESCRIPTION')).toBe(false);
  });

  it('percent-encodes "," and ";" in the URL value instead of TEXT-escaping them', () => {
    const url = 'https://book.calendbook.test/x?slots=a,b;c';
    const ics = renderFeed(
      renderInput({
        eventTypes: new Map([['ev-intro', { ...INTRO, url }]]),
        slots: [slot('ev-intro', '2026-03-02T10:00:00Z')],
      }),
    );
    assertStrictIcs(ics);
    const [event] = eventsOf(ics);
    expect(event?.get('URL;VALUE=URI')).toBe('https://book.calendbook.test/x?slots=a%2Cb%3Bc');
    expect(event?.get('DESCRIPTION')).toBe(
      'Open for booking: https://book.calendbook.test/x?slots=a\\,b\\;c',
    );
  });

  it('leaves out slots of event types it was not given', () => {
    const ics = renderFeed(renderInput({ eventTypes: new Map([['ev-cafe', CAFE]]) }));
    expect(eventsOf(ics).map((e) => e.get('SUMMARY'))).toEqual([CAFE.title]);
  });

  it('gives a slot whose end is not after its start the event type duration', () => {
    const broken = { ...slot('ev-intro', '2026-03-02T10:00:00Z'), endsAt: at('2026-03-02T10:00:00Z') };
    const ics = renderFeed(renderInput({ slots: [broken] }));
    assertStrictIcs(ics);
    expect(eventsOf(ics)[0]?.get('DTEND')).toBe('20260302T103000Z');
  });

  it('shows the same UTC instants whatever side of a DST change the slots are on', () => {
    // Europe/Berlin moves to summer time on 2026-03-29 at 01:00Z; the feed carries UTC and does not care.
    const ics = renderFeed(
      renderInput({
        slots: [slot('ev-intro', '2026-03-29T00:30:00Z', 60), slot('ev-intro', '2026-03-29T01:30:00Z', 30)],
      }),
    );
    assertStrictIcs(ics);
    expect(ics).not.toMatch(/TZID|VTIMEZONE/);
    expect(eventsOf(ics).map((e) => [e.get('DTSTART'), e.get('DTEND')])).toEqual([
      ['20260329T003000Z', '20260329T013000Z'],
      ['20260329T013000Z', '20260329T020000Z'],
    ]);
  });
});

describe('renderFeed: identity and order', () => {
  it('renders byte-identical text for the same input, in whatever order the slots come', () => {
    const input = renderInput();
    const first = renderFeed(input);
    expect(renderFeed(renderInput())).toBe(first);
    expect(renderFeed({ ...input, slots: [...input.slots].reverse() })).toBe(first);
  });

  it('orders events by start, then UID', () => {
    const ics = renderFeed(renderInput());
    const keys = eventsOf(ics).map((e) => `${e.get('DTSTART')} ${e.get('UID')}`);
    expect(keys).toEqual([...keys].sort());
    expect(keys).toHaveLength(4);
  });

  it('caps the number of events, keeping the earliest', () => {
    const slots = Array.from({ length: 10 }, (_, i) =>
      slot('ev-intro', new Date(Date.parse('2026-03-02T10:00:00Z') + (9 - i) * 3_600_000).toISOString()),
    );
    const events = eventsOf(renderFeed(renderInput({ slots, maxEvents: 3 })));
    expect(events.map((e) => e.get('DTSTART'))).toEqual([
      '20260302T100000Z',
      '20260302T110000Z',
      '20260302T120000Z',
    ]);
    expect(eventsOf(renderFeed(renderInput({ slots, maxEvents: 0 })))).toEqual([]);
  });

  it('writes a duplicated slot once', () => {
    const twice = slot('ev-intro', '2026-03-02T10:00:00Z');
    const ics = renderFeed(renderInput({ slots: [twice, { ...twice }] }));
    assertStrictIcs(ics);
    expect(eventsOf(ics)).toHaveLength(1);
  });
});

describe('slotUid', () => {
  it('is stable: a fixed slot keeps this UID across releases', () => {
    // Changing the derivation would make every subscriber see every slot deleted and re-added. The value is
    // sha256("<connection>\0<event>\0<ISO start>") cut to 32 hex digits, computed outside node.
    expect(slotUid(CONNECTION_ID, 'ev-intro', at('2026-03-02T10:00:00Z'))).toBe(
      '7f9df557a67f0a05ccc0a5fd3ff4765d@slotfeed',
    );
  });

  it('stays the same when the slot changes (end, sequence, stamps) and differs per connection, event and start', () => {
    const base = renderFeed(renderInput({ slots: [slot('ev-intro', '2026-03-02T10:00:00Z')] }));
    const moved = renderFeed(
      renderInput({
        slots: [
          slot('ev-intro', '2026-03-02T10:00:00Z', 45, {
            sequence: 1,
            lastChangedAt: at('2026-03-02T08:00:00Z'),
          }),
        ],
      }),
    );
    expect(eventsOf(moved)[0]?.get('UID')).toBe(eventsOf(base)[0]?.get('UID'));
    expect(eventsOf(moved)[0]?.get('SEQUENCE')).toBe('1');
    const uid = slotUid(CONNECTION_ID, 'ev-intro', at('2026-03-02T10:00:00Z'));
    expect(slotUid('another-connection', 'ev-intro', at('2026-03-02T10:00:00Z'))).not.toBe(uid);
    expect(slotUid(CONNECTION_ID, 'ev-cafe', at('2026-03-02T10:00:00Z'))).not.toBe(uid);
    expect(slotUid(CONNECTION_ID, 'ev-intro', at('2026-03-02T10:30:00Z'))).not.toBe(uid);
  });

  it('holds no personal data: only a hash and the product name', () => {
    const ics = renderFeed(renderInput());
    for (const event of eventsOf(ics)) {
      const uid = event.get('UID') ?? '';
      expect(uid).toMatch(/^[0-9a-f]{32}@slotfeed$/);
      for (const revealing of [CONNECTION_ID, 'ev-intro', 'ev-cafe', 'Linus', 'Turing', '2026']) {
        expect(uid).not.toContain(revealing);
      }
    }
  });
});
