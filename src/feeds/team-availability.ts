// A team's free time from its members' free blocks, as plain data (no I/O):
// - allFree: when every member is free, pieces shorter than a minimum dropped (a 5-minute overlap is no
//   meeting);
// - anyFree: when at least one member is free, split wherever the set of free members changes, each piece
//   naming who is free.
// Each member's own blocks may overlap or touch; they are joined first. The output is ordered and carries
// names in a fixed order, so the same input renders the same bytes.
import { unionOf, type Interval } from './busy-blocks.js';

export interface TeamMemberTime {
  /** The member's connection id: it orders members whose names are equal. */
  id: string;
  /** What a team feed calls the member (a display name, never an e-mail address). */
  name: string;
  blocks: readonly Interval[];
}

export interface TeamBlock extends Interval {
  /** Who is free throughout the block, by name then id. */
  free: { id: string; name: string }[];
}

const ms = (d: Date) => d.getTime();
const later = (a: Date, b: Date) => (ms(b) > ms(a) ? b : a);
const byName = (a: { id: string; name: string }, b: { id: string; name: string }) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

function joined(blocks: readonly Interval[]): Interval[] {
  return unionOf([...blocks], (a, b) => ({ startsAt: a.startsAt, endsAt: later(a.endsAt, b.endsAt) }));
}

/**
 * The pieces between every start and end of every member's joined blocks, each with the members free
 * throughout it; pieces where nobody is free are left out.
 */
function sweep(members: readonly TeamMemberTime[]): TeamBlock[] {
  const own = members.map((m) => ({ member: { id: m.id, name: m.name }, blocks: joined(m.blocks) }));
  const cuts = [...new Set(own.flatMap((m) => m.blocks.flatMap((b) => [ms(b.startsAt), ms(b.endsAt)])))].sort(
    (a, b) => a - b,
  );
  const pieces: TeamBlock[] = [];
  for (let i = 1; i < cuts.length; i++) {
    const from = cuts[i - 1]!;
    const to = cuts[i]!;
    const free = own
      .filter((m) => m.blocks.some((b) => ms(b.startsAt) <= from && ms(b.endsAt) >= to))
      .map((m) => m.member)
      .sort(byName);
    if (free.length > 0) pieces.push({ startsAt: new Date(from), endsAt: new Date(to), free });
  }
  return pieces;
}

const sameMembers = (a: TeamBlock, b: TeamBlock) =>
  a.free.length === b.free.length && a.free.every((m, i) => m.id === b.free[i]!.id);

/** At least one member free; a new block wherever the set of free members changes. */
export function anyFree(members: readonly TeamMemberTime[]): TeamBlock[] {
  const out: TeamBlock[] = [];
  for (const piece of sweep(members)) {
    const last = out.at(-1);
    if (last !== undefined && ms(last.endsAt) === ms(piece.startsAt) && sameMembers(last, piece)) {
      out[out.length - 1] = { ...last, endsAt: piece.endsAt };
    } else out.push(piece);
  }
  return out;
}

/** Every member free, in pieces of at least `minimumMinutes`; nothing for a team without members. */
export function allFree(
  members: readonly TeamMemberTime[],
  options: { minimumMinutes: number },
): TeamBlock[] {
  if (members.length === 0) return [];
  const everyone = anyFree(members).filter((block) => block.free.length === members.length);
  const merged = unionOf(everyone, (a, b) => ({ ...a, endsAt: later(a.endsAt, b.endsAt) }));
  return merged.filter((b) => ms(b.endsAt) - ms(b.startsAt) >= options.minimumMinutes * 60_000);
}
