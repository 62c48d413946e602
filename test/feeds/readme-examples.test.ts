// The examples of each view in docs/feeds.md are what slotfeed writes: each block marked `<!-- example: name -->`
// is found, line for line and in order, in the feed rendered here from the input the page describes.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import type { FeedView } from '../../src/feeds/feed-options.js';
import { renderCalendar, renderFeed } from '../../src/feeds/render-feed.js';
import { planTeamFeedEvents } from '../../src/feeds/team-feed-events.js';

const at = (iso: string) => new Date(iso);
const eventType = (title: string, durationMinutes: number, slug: string) => ({
  title,
  durationMinutes,
  url: `https://book.calendbook.test/ada/${slug}`,
  color: '#33b679',
  enabled: true,
  secret: false,
});
const slot = (eventId: string, start: string, minutes: number) => ({
  eventId,
  startsAt: at(start),
  endsAt: new Date(at(start).getTime() + minutes * 60_000),
  sequence: 0,
  firstSeenAt: at('2026-03-01T09:00:00Z'),
  lastChangedAt: at('2026-03-01T09:00:00Z'),
});

/** An Intro call (30 min) and a Deep dive (1 h) open at 09:00 UTC, and a booking inferred at 10:00. */
const person = (view: FeedView) =>
  renderFeed({
    connectionId: '6f1c2b9e-4d7a-4f3e-8a21-0c5d9e7b3a10',
    calendarName: 'Ada Lovelace – free time',
    description: 'Free time of Ada Lovelace.',
    refreshIntervalSeconds: 900,
    eventTypes: new Map([
      ['evt_intro', eventType('Intro call', 30, 'intro-call')],
      ['evt_deep', eventType('Deep dive', 60, 'deep-dive')],
    ]),
    slots: [
      slot('evt_intro', '2026-03-02T09:00:00Z', 30),
      slot('evt_intro', '2026-03-02T09:30:00Z', 30),
      slot('evt_deep', '2026-03-02T09:00:00Z', 60),
    ],
    bookings: [
      {
        startsAt: at('2026-03-02T10:00:00Z'),
        endsAt: at('2026-03-02T10:30:00Z'),
        detectedAt: at('2026-03-02T08:45:00Z'),
      },
    ],
    view,
    merge: false,
    maxEvents: 500,
  });

/** Ada free 09:00–11:00 UTC, Grace 10:00–12:00. */
const team = (mode: 'all' | 'any') =>
  renderCalendar(
    { calendarName: 'Support rota', description: 'A team.', refreshIntervalSeconds: 900 },
    planTeamFeedEvents({
      teamId: '7e5d4c3b-2a19-4876-9543-210fedcba987',
      mode,
      minimumMinutes: 30,
      members: [
        {
          id: 'a',
          name: 'Ada Lovelace',
          blocks: [{ startsAt: at('2026-03-02T09:00:00Z'), endsAt: at('2026-03-02T11:00:00Z') }],
        },
        {
          id: 'g',
          name: 'Grace Hopper',
          blocks: [{ startsAt: at('2026-03-02T10:00:00Z'), endsAt: at('2026-03-02T12:00:00Z') }],
        },
      ],
      maxEvents: 500,
      changedAt: at('2026-03-02T08:45:00Z'),
    }),
  );

const RENDERED: Record<string, () => string> = {
  free: () => person('free'),
  slots: () => person('slots'),
  busy: () => person('busy'),
  'team-all': () => team('all'),
  'team-any': () => team('any'),
};

const DOC = readFileSync(new URL('../../docs/feeds.md', import.meta.url), 'utf8');
const EXAMPLES = [...DOC.matchAll(/<!-- example: ([\w-]+) -->\s*```\n([\s\S]*?)```/g)].map((m) => ({
  name: m[1]!,
  lines: m[2]!.trimEnd().split('\n'),
}));

describe('the feed examples in docs/feeds.md', () => {
  it('has one for each view and team mode', () => {
    expect(EXAMPLES.map((e) => e.name).sort()).toEqual(Object.keys(RENDERED).sort());
  });

  it.each(EXAMPLES.map((e) => [e.name, e.lines] as const))('%s is what slotfeed writes', (name, lines) => {
    const rendered = RENDERED[name]!().split('\r\n');
    // The lines in order, within one VEVENT.
    const events = rendered
      .join('\n')
      .split('BEGIN:VEVENT')
      .slice(1)
      .map((e) => e.split('\n'));
    const matching = events.filter((event) => {
      let from = 0;
      for (const line of lines) {
        const found = event.indexOf(line, from);
        if (found < 0) return false;
        from = found + 1;
      }
      return true;
    });
    expect(matching.length).toBe(1);
  });
});
