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
