// The team maths as properties over random members (minutes from an epoch), checked minute by minute.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { allFree, anyFree, type TeamMemberTime } from '../../src/feeds/team-availability.js';

const T0 = Date.parse('2026-03-02T00:00:00Z');
const at = (minute: number) => new Date(T0 + minute * 60_000);
const HORIZON = 600;
const block = fc
  .tuple(fc.integer({ min: 0, max: HORIZON - 1 }), fc.integer({ min: 1, max: 180 }))
  .map(([s, len]) => ({ startsAt: at(s), endsAt: at(Math.min(HORIZON, s + len)) }));
const members = fc
  .array(fc.tuple(fc.constantFrom('Ada', 'Grace', 'Lin', 'Ada'), fc.array(block, { maxLength: 6 })), {
    maxLength: 5,
  })
  .map((list) => list.map(([name, blocks], i): TeamMemberTime => ({ id: `m${i}`, name, blocks })));
const freeAt = (m: TeamMemberTime, minute: number) =>
  m.blocks.some(
    (b) => b.startsAt.getTime() <= at(minute).getTime() && at(minute).getTime() < b.endsAt.getTime(),
  );
const blockAt = <T extends { startsAt: Date; endsAt: Date }>(blocks: T[], minute: number) =>
  blocks.filter(
    (b) => b.startsAt.getTime() <= at(minute).getTime() && at(minute).getTime() < b.endsAt.getTime(),
  );

describe('anyFree', () => {
  it('is exactly the union of the members’ free time, without overlaps, naming exactly who is free at every minute', () => {
    fc.assert(
      fc.property(members, (team) => {
        const blocks = anyFree(team);
        for (let i = 1; i < blocks.length; i++) {
          expect(blocks[i]!.startsAt.getTime()).toBeGreaterThanOrEqual(blocks[i - 1]!.endsAt.getTime());
        }
        for (let minute = 0; minute < HORIZON; minute++) {
          const free = team
            .filter((m) => freeAt(m, minute))
            .map((m) => m.id)
            .sort();
          const covering = blockAt(blocks, minute);
          expect(covering.length).toBe(free.length > 0 ? 1 : 0);
          if (covering[0]) expect(covering[0].free.map((m) => m.id).sort()).toEqual(free);
        }
        // A block ends where the set of free members changes: touching blocks never name the same members.
        for (let i = 1; i < blocks.length; i++) {
          if (blocks[i]!.startsAt.getTime() === blocks[i - 1]!.endsAt.getTime()) {
            expect(blocks[i]!.free.map((m) => m.id)).not.toEqual(blocks[i - 1]!.free.map((m) => m.id));
          }
        }
      }),
    );
  });
});

describe('allFree', () => {
  it('lies inside every member’s free time and covers every shared stretch of at least the minimum', () => {
    fc.assert(
      fc.property(members, fc.integer({ min: 1, max: 90 }), (team, minimumMinutes) => {
        const blocks = allFree(team, { minimumMinutes });
        for (const b of blocks) {
          expect(b.endsAt.getTime() - b.startsAt.getTime()).toBeGreaterThanOrEqual(minimumMinutes * 60_000);
          for (
            let minute = (b.startsAt.getTime() - T0) / 60_000;
            minute < (b.endsAt.getTime() - T0) / 60_000;
            minute++
          ) {
            for (const m of team) expect(freeAt(m, minute)).toBe(true);
          }
        }
        // Every run of minutes where all are free, at least the minimum long, is covered.
        let runStart: number | undefined;
        for (let minute = 0; minute <= HORIZON; minute++) {
          const all = minute < HORIZON && team.length > 0 && team.every((m) => freeAt(m, minute));
          if (all && runStart === undefined) runStart = minute;
          if (!all && runStart !== undefined) {
            if (minute - runStart >= minimumMinutes) {
              for (let m = runStart; m < minute; m++) expect(blockAt(blocks, m)).toHaveLength(1);
            }
            runStart = undefined;
          }
        }
      }),
    );
  });

  it('drops a shared stretch shorter than the minimum, keeps one exactly as long, and is empty for no members', () => {
    const team: TeamMemberTime[] = [
      {
        id: 'a',
        name: 'Ada',
        blocks: [
          { startsAt: at(0), endsAt: at(60) },
          { startsAt: at(100), endsAt: at(200) },
        ],
      },
      {
        id: 'b',
        name: 'Grace',
        blocks: [
          { startsAt: at(40), endsAt: at(70) },
          { startsAt: at(170), endsAt: at(300) },
        ],
      },
    ];
    expect(allFree(team, { minimumMinutes: 30 })).toEqual([
      {
        startsAt: at(170),
        endsAt: at(200),
        free: [
          { id: 'a', name: 'Ada' },
          { id: 'b', name: 'Grace' },
        ],
      },
    ]);
    expect(allFree(team, { minimumMinutes: 20 })).toHaveLength(2);
    expect(allFree([], { minimumMinutes: 30 })).toEqual([]);
  });
});
