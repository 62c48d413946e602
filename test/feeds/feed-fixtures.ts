// Plain feed input for the pure tests, around the reference instant 2026-03-02T09:00:00Z.
import type { FeedEventType, FeedRenderInput, FeedSlot } from '../../src/feeds/render-feed.js';

export const CONNECTION_ID = '6f1c2b9e-4d7a-4f3e-8a21-0c5d9e7b3a10';
export const at = (iso: string) => new Date(iso);

export const INTRO: FeedEventType = {
  title: 'Intro call',
  durationMinutes: 30,
  url: 'https://book.calendbook.test/linus-turing/intro-call-1',
  color: '#33b679',
  enabled: true,
  secret: false,
};

export const CAFE: FeedEventType = {
  title: 'Café-Gespräch ☕ mit Ünïcødé-Gästen 🎉🎉 — ausführliche Beratung über Zeitzonen und Kalender 📅✨',
  durationMinutes: 60,
  url: 'https://book.calendbook.test/linus-turing/cafe-gesprach-2',
  color: 'Teal',
  enabled: true,
  secret: false,
};

/** A slot of `eventId` at `start` (ISO) lasting `minutes`, first seen a day before the reference instant. */
export function slot(eventId: string, start: string, minutes = 30, extra: Partial<FeedSlot> = {}): FeedSlot {
  const startsAt = at(start);
  return {
    eventId,
    startsAt,
    endsAt: new Date(startsAt.getTime() + minutes * 60_000),
    sequence: 0,
    firstSeenAt: at('2026-03-01T09:00:00.000Z'),
    lastChangedAt: at('2026-03-01T09:00:00.000Z'),
    ...extra,
  };
}

export function renderInput(overrides: Partial<FeedRenderInput> = {}): FeedRenderInput {
  return {
    connectionId: CONNECTION_ID,
    calendarName: 'Linus Turing – free time',
    description:
      'Free time of Linus Turing, from Calendbook. Data as of 2026-03-02 10:15 (Europe/Berlin); ' +
      'refreshed about every 15 minutes.',
    refreshIntervalSeconds: 900,
    eventTypes: new Map([
      ['ev-intro', INTRO],
      ['ev-cafe', CAFE],
    ]),
    slots: [
      slot('ev-intro', '2026-03-02T10:00:00Z'),
      slot('ev-intro', '2026-03-02T10:30:00Z'),
      slot('ev-cafe', '2026-03-02T10:00:00Z', 60),
      slot('ev-intro', '2026-03-03T08:00:00Z'),
    ],
    view: 'slots',
    merge: false,
    maxEvents: 500,
    ...overrides,
  };
}

/** The VEVENT blocks of a feed, unfolded, as maps of property line name (with parameters) → value. */
export function eventsOf(ics: string): Map<string, string>[] {
  const lines = ics.replace(/\r\n[ \t]/g, '').split('\r\n');
  const events: Map<string, string>[] = [];
  let current: Map<string, string> | undefined;
  for (const line of lines) {
    if (line === 'BEGIN:VEVENT') current = new Map();
    else if (line === 'END:VEVENT' && current) {
      events.push(current);
      current = undefined;
    } else if (current) {
      const colon = line.indexOf(':');
      current.set(line.slice(0, colon), line.slice(colon + 1));
    }
  }
  return events;
}

/** Unfolded calendar-level property lines (those outside every VEVENT). */
export function calendarLines(ics: string): string[] {
  const lines: string[] = [];
  let inEvent = false;
  for (const line of ics.replace(/\r\n[ \t]/g, '').split('\r\n')) {
    if (line === 'BEGIN:VEVENT') inEvent = true;
    else if (line === 'END:VEVENT') inEvent = false;
    else if (!inEvent && line !== '') lines.push(line);
  }
  return lines;
}
