// The slots outside a window that belong to runs of slots crossing its edges, for views that list each free
// block once, whole, under the day it starts (a share page's week, the JSON API's range): a run that starts in
// the window and goes on past its end is read to its end, and the slots just before the window that run into
// it are read so that a block already under way is known to have started earlier. Slots are read only when
// they start in the window otherwise, so without this a block across a week's end was cut at the last slot
// starting in the week, and the next week listed its tail as a block of its own.
import type { Prisma } from '../generated/prisma/client.js';

const DAY_MS = 86_400_000;

/** How far past its edges a window's runs may be read. */
export interface SlotRunEdges {
  /** No slot starting earlier is read: where the days a reader may see begin (a run under way then shows from it). */
  from: Date;
  /** No slot starting at or after this is read (the days a reader may see end); null: as far as runs go. */
  until: Date | null;
}

export interface SlotsAround<S> {
  /** Slots starting before the window whose time reaches its start. */
  before: S[];
  /** Slots starting at or after the window's end, each joining a run that crosses it, by start. */
  after: S[];
}

/**
 * The slots around `window` that join the runs crossing its edges. `read` gives the reader's slots starting in
 * a range (and matching `also`), by start; `endOf` is a slot's end as free blocks count it (a slot without a
 * valid end lasts its event type's duration). The end is followed a day at a time, so a run rarely costs more
 * than one read and a run over weeks (free day and night) still ends at `edges.until` or the last slot.
 */
export async function slotsAround<S extends { startsAt: Date }>(
  read: (startsAt: Prisma.DateTimeFilter, also?: Prisma.SlotWhereInput) => Promise<S[]>,
  window: { windowStart: Date; windowEnd: Date; edges: SlotRunEdges },
  inWindow: readonly S[],
  endOf: (slot: S) => number,
): Promise<SlotsAround<S>> {
  const start = window.windowStart.getTime();
  const before =
    window.edges.from.getTime() < start
      ? (
          await read(
            { gte: window.edges.from, lt: window.windowStart },
            // A slot without a valid end is counted by its duration, so the day before is read whatever its end.
            {
              OR: [{ endsAt: { gte: window.windowStart } }, { startsAt: { gte: new Date(start - DAY_MS) } }],
            },
          )
        ).filter((slot) => endOf(slot) >= start)
      : [];

  const after: S[] = [];
  let reach = inWindow.reduce((latest, slot) => Math.max(latest, endOf(slot)), -Infinity);
  const limit = window.edges.until?.getTime() ?? Infinity;
  // A slot starting when a run ends joins it (free-blocks.ts), hence "reach >= cursor".
  for (let cursor = window.windowEnd.getTime(); reach >= cursor && cursor < limit;) {
    const chunkEnd = Math.min(cursor + DAY_MS, limit);
    for (const slot of await read({ gte: new Date(cursor), lt: new Date(chunkEnd) })) {
      if (slot.startsAt.getTime() > reach) return { before, after };
      after.push(slot);
      reach = Math.max(reach, endOf(slot));
    }
    cursor = chunkEnd;
  }
  return { before, after };
}
