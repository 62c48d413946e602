// The steps the CalDAV push tests share: an owner connected through the web flow and synced once, with their
// feed written to a CalDAV calendar; and one booking upstream, synced, so one block of that feed shrinks and the
// next push writes one change.
import type { CaldavDestinationRecord } from '../../../src/store/caldav-destinations.js';
import type { FakeClock } from '../../support/sync-harness.js';
import type { WebHarness } from '../../support/web-harness.js';

export interface CalendarLogin {
  serverUrl: string;
  username: string;
  password: string;
  /** The calendar's name on the server (found or made); absent: the default name. */
  calendarName?: string;
}

/** The harness's simulated user `userIndex`, connected and synced, their feed added as a CalDAV destination. */
export async function connectedWithDestination(
  h: WebHarness,
  userIndex: number,
  calendar: CalendarLogin,
): Promise<{ connectionId: string; destination: CaldavDestinationRecord }> {
  const connected = await h.connectViaWeb(h.sync.sim.users[userIndex]!.email);
  await h.syncNow(connected.connectionId);
  const feedId = (await h.feeds.findByToken(connected.token!))!.id;
  const destination = await h.sync.services.caldavDestinations.add({ feedId, ...calendar });
  return { connectionId: connected.connectionId, destination };
}

/**
 * Books upstream the first slot open more than an hour ahead, moves the harness's fake clock ten minutes and
 * syncs: one block of the connection's feed shrinks.
 */
export async function bookNextSlotAndSync(h: WebHarness, connectionId: string): Promise<void> {
  const clock = h.sync.clock as FakeClock;
  const slot = (await h.sync.db.prisma.slot.findFirst({
    where: { connectionId, goneAt: null, startsAt: { gt: new Date(clock.now().getTime() + 3600_000) } },
    orderBy: { startsAt: 'asc' },
  }))!;
  h.sync.sim.control.book(slot.upstreamEventId, slot.startsAt.toISOString());
  clock.advance(600);
  await h.syncNow(connectionId);
}
