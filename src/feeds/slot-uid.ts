// A VEVENT's UID must stay the same for the slot's whole life (clients match updates by it) and must not leak
// who the feed belongs to: subscribers may share events onwards. A hash of connection id (a random UUID), event
// type id and start satisfies both; 128 bits of it keep the UID line short enough to never need folding.
import { createHash } from 'node:crypto';

export function slotUid(connectionId: string, eventId: string, startsAt: Date): string {
  const digest = createHash('sha256')
    .update(`${connectionId}\u0000${eventId}\u0000${startsAt.toISOString()}`, 'utf8')
    .digest('hex');
  return `${digest.slice(0, 32)}@slotfeed`;
}

/** A block of busy time, by where it starts; "busy" keeps it apart from a free block starting there. */
export function busyBlockUid(connectionId: string, startsAt: Date): string {
  const digest = createHash('sha256')
    .update(`${connectionId}\u0000busy\u0000${startsAt.toISOString()}`, 'utf8')
    .digest('hex');
  return `${digest.slice(0, 32)}@slotfeed`;
}

/**
 * A block of free time is known by where it starts: a booking that splits it keeps the first part's UID, and
 * the block keeps its UID while its end moves. "free" keeps it apart from any slot's UID.
 */
export function freeBlockUid(connectionId: string, startsAt: Date): string {
  const digest = createHash('sha256')
    .update(`${connectionId}\u0000free\u0000${startsAt.toISOString()}`, 'utf8')
    .digest('hex');
  return `${digest.slice(0, 32)}@slotfeed`;
}

/** A team feed's block, by team, mode and where it starts: the team's id keeps members' own UIDs apart. */
export function teamBlockUid(teamId: string, mode: 'all' | 'any', startsAt: Date): string {
  const digest = createHash('sha256')
    .update(`${teamId}\u0000team-${mode}\u0000${startsAt.toISOString()}`, 'utf8')
    .digest('hex');
  return `${digest.slice(0, 32)}@slotfeed`;
}
