// What a scheduled pull may leave out, decided from what the store already knows: the two savings that make
// near bands cheap enough to pull every few minutes (issue 30). Pure, so the worker (pull-snapshot.ts), the
// scheduler's budget (call-budget.ts) and the freshness bench count the same calls.
//
// 1. The account (GET /users/me and GET /events) is read on its own cadence, SYNC_ACCOUNT_INTERVAL, by the
//    first pull after it has passed, instead of by every pull; and at once, within the pull, when a slot list or
//    overview answers 404 for an event type slotfeed knows, or when a stored open slot is missing from its
//    date's fresh slot list (a booking, or the event type disabled or removed: only the list of event types
//    tells which, so it is read before the commit decides the close reason). A first sync and a sync asked
//    for read it always.
// 2. A band's dates are asked for directly (one slot list per date) instead of through the overview (its
//    windows, then one slot list per available date) when that is fewer calls by what the store knows: the
//    dates of the band that hold an open slot of the event type are known to be inside the overview's range
//    and available, so the overview would cost its windows and at least those lists. A slot list answers
//    for every slot of its date whatever the overview would have said, so a date asked for directly misses
//    nothing; only the band's stored overview is then as the last pull that read it left it.

/** GET /users/me and GET /events: what reading the account costs. */
export const ACCOUNT_CALLS = 2;

/** Whether a scheduled pull reads the account: never read, or last read `intervalSeconds` ago or more. */
export function accountReadDue(lastReadAtMs: number | null, nowMs: number, intervalSeconds: number): boolean {
  return lastReadAtMs === null || nowMs - lastReadAtMs >= intervalSeconds * 1000;
}

export type SegmentMode = 'overview' | 'direct';

/**
 * How to pull one event type's dates of one band: directly when asking each date costs fewer calls than the
 * overview's windows and the dates the store knows are available (a tie keeps the overview, which also
 * refreshes the stored one at no cost).
 */
export function segmentMode(dates: number, windows: number, knownAvailable: number): SegmentMode {
  return dates < windows + knownAvailable ? 'direct' : 'overview';
}

/** What a band of one event type costs in each mode: direct, every date; overview, its windows and `available`. */
export function segmentCalls(mode: SegmentMode, dates: number, windows: number, available: number): number {
  return mode === 'direct' ? dates : windows + available;
}
