// A team feed as calendars read it, from plain data: random teams rendered pass the strict checks, render to
// the same bytes twice, keep their UIDs when nothing about a block's start changed, and never show an e-mail
// address; the calendar's name and description say what the feed is and whose free time is not current.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { describeTeamFeed, teamFeedCalendarName } from '../../src/feeds/describe-feed.js';
import { renderCalendar } from '../../src/feeds/render-feed.js';
import {
  memberName,
  planTeamFeedEvents,
  UNNAMED_MEMBER,
  type TeamFeedEventsInput,
} from '../../src/feeds/team-feed-events.js';
import type { TeamMemberTime } from '../../src/feeds/team-availability.js';
import { assertStrictIcs } from '../support/ics-checks.js';

const TEAM_ID = '7e5d4c3b-2a19-4876-9543-210fedcba987';
const T0 = Date.parse('2026-03-02T00:00:00Z');
const at = (minute: number) => new Date(T0 + minute * 60_000);
const CHANGED = new Date('2026-03-01T12:00:00Z');

const block = fc
  .tuple(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 5, max: 240 }))
  .map(([s, len]) => ({ startsAt: at(s), endsAt: at(s + len) }));
const members = fc
  .array(
    fc.tuple(
      // Names as upstream gives them: accents, commas and semicolons (escaped in TEXT), emoji, control bytes.
      fc.constantFrom('Ada Lovelace', 'Grace, Hopper', 'Zoë; Ünal', 'Linus 🐧', 'Tab\tName', 'Ada Lovelace'),
      fc.array(block, { maxLength: 8 }),
    ),
    { minLength: 1, maxLength: 6 },
  )
  .map((list) =>
    list.map(([name, blocks], i): TeamMemberTime => ({ id: `m${i}`, name: memberName(name), blocks })),
  );
const mode = fc.constantFrom('all' as const, 'any' as const);

function render(input: TeamFeedEventsInput): string {
  return renderCalendar(
    {
      calendarName: teamFeedCalendarName({ teamName: 'Design, Research; & Ops', mode: input.mode }),
      description: 'A team.',
      refreshIntervalSeconds: 900,
    },
    planTeamFeedEvents(input),
  );
}

const inputOf = (team: TeamMemberTime[], m: 'all' | 'any'): TeamFeedEventsInput => ({
  teamId: TEAM_ID,
  mode: m,
  minimumMinutes: 30,
  members: team,
  maxEvents: 500,
  changedAt: CHANGED,
});

describe('a team feed rendered', () => {
  it('passes the strict checks and is byte-identical when rendered again', () => {
    fc.assert(
      fc.property(members, mode, (team, m) => {
        const text = render(inputOf(team, m));
        assertStrictIcs(text);
        expect(render(inputOf(team, m))).toBe(text);
      }),
      { numRuns: 150 },
    );
  });

  it('gives a block the same UID as long as it starts at the same time, whatever else changes', () => {
    fc.assert(
      fc.property(members, mode, block, (team, m, extra) => {
        const before = planTeamFeedEvents(inputOf(team, m)).events;
        const grown = team.map((member, i) =>
          i === 0 ? { ...member, blocks: [...member.blocks, extra] } : member,
        );
        const after = planTeamFeedEvents(inputOf(grown, m)).events;
        const uidAt = new Map(after.map((e) => [e.startsAt.getTime(), e.uid]));
        for (const event of before) {
          const uid = uidAt.get(event.startsAt.getTime());
          if (uid !== undefined) expect(uid).toBe(event.uid);
        }
        // All and any blocks never share a UID, nor do two teams' blocks.
        const otherMode = planTeamFeedEvents(inputOf(team, m === 'all' ? 'any' : 'all')).events;
        const otherTeam = planTeamFeedEvents({
          ...inputOf(team, m),
          teamId: `${TEAM_ID.slice(0, -1)}0`,
        }).events;
        const uids = new Set(before.map((e) => e.uid));
        for (const e of [...otherMode, ...otherTeam]) expect(uids.has(e.uid)).toBe(false);
      }),
      { numRuns: 100 },
    );
  });

  it('cuts at the cap and says how many there were', () => {
    const team: TeamMemberTime[] = [
      {
        id: 'a',
        name: 'Ada',
        blocks: [0, 1, 2, 3].map((d) => ({ startsAt: at(d * 1440), endsAt: at(d * 1440 + 60) })),
      },
    ];
    const planned = planTeamFeedEvents({ ...inputOf(team, 'any'), maxEvents: 2 });
    expect(planned.events.map((e) => e.startsAt)).toEqual([at(0), at(1440)]);
    expect(planned.total).toBe(4);
  });

  it('names members by display name; one without a name is not left out', () => {
    expect(memberName('  Ada Lovelace ')).toBe('Ada Lovelace');
    expect(memberName(null)).toBe(UNNAMED_MEMBER);
    expect(memberName('   ')).toBe(UNNAMED_MEMBER);
    const planned = planTeamFeedEvents(
      inputOf(
        [
          { id: 'a', name: 'Ada', blocks: [{ startsAt: at(0), endsAt: at(60) }] },
          { id: 'b', name: memberName(null), blocks: [{ startsAt: at(30), endsAt: at(90) }] },
        ],
        'any',
      ),
    );
    expect(planned.events.map((e) => [e.summary, e.description])).toEqual([
      ['1 of 2 free', 'Free: Ada.'],
      ['2 of 2 free', `Free: Ada, ${UNNAMED_MEMBER}.`],
      ['1 of 2 free', `Free: ${UNNAMED_MEMBER}.`],
    ]);
  });

  it('uses the feed’s own title for its blocks when it has one', () => {
    const team: TeamMemberTime[] = [{ id: 'a', name: 'Ada', blocks: [{ startsAt: at(0), endsAt: at(60) }] }];
    expect(planTeamFeedEvents({ ...inputOf(team, 'all'), summary: 'Team time' }).events[0]!.summary).toBe(
      'Team time',
    );
    expect(planTeamFeedEvents(inputOf(team, 'all')).events[0]!.summary).toBe('Everyone free');
  });
});

describe('a team feed’s name and description', () => {
  const member = (
    displayName: string | null,
    status: 'active' | 'needs_reauth' | 'disabled',
    synced = true,
  ) => ({
    displayName,
    status,
    feedChangedAt: synced ? new Date('2026-03-02T08:15:00Z') : null,
  });

  it('says what it shows and who is in it', () => {
    expect(teamFeedCalendarName({ teamName: 'Design', mode: 'all' })).toBe('Design – everyone free');
    expect(teamFeedCalendarName({ teamName: 'Design', mode: 'any' })).toBe('Design – who is free');
    expect(
      describeTeamFeed({
        teamName: 'Design',
        mode: 'all',
        minimumMinutes: 45,
        members: [member('Ada', 'active'), member('Grace', 'active')],
        refreshIntervalSeconds: 900,
      }),
    ).toBe(
      'Times when everyone in Design is free, at least 45 min at a time, from Calendbook. Members: Ada, Grace. ' +
        'Refreshed about every 15 minutes.',
    );
  });

  it('names each member whose free time is not current, and why', () => {
    const text = describeTeamFeed({
      teamName: 'Design',
      mode: 'any',
      minimumMinutes: 30,
      members: [member('Ada', 'needs_reauth'), member('Grace', 'disabled'), member(null, 'active', false)],
      refreshIntervalSeconds: 3600,
    });
    expect(text).toContain('Times when someone in Design is free, naming who');
    expect(text).toContain(
      "Ada's account needs re-authorisation: their last synced free time is shown (last synced 2026-03-02 08:15 UTC).",
    );
    expect(text).toContain("Grace's syncing is turned off: their last synced free time is shown");
    expect(text).toContain(`${UNNAMED_MEMBER}: nothing synced yet.`);
    expect(text).toContain('Refreshed about every hour.');
  });

  it('says so when the team has nobody in it', () => {
    expect(
      describeTeamFeed({
        teamName: 'Empty',
        mode: 'all',
        minimumMinutes: 30,
        members: [],
        refreshIntervalSeconds: 900,
      }),
    ).toContain('The team has no members yet.');
  });
});
