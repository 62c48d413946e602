// A feed's title as the pages show it (the owner's feed cards, the week preview, the share page): its label, or
// for a person's feed the event type it shows, for a team's the calendar name its bytes carry.
import type { FeedRecord } from '../store/feeds.js';

export interface TitledFeed {
  feed: Pick<FeedRecord, 'teamId' | 'label' | 'upstreamEventId'>;
  /** The title of the event type a person's feed names (null: none, or not known). */
  eventTitle: string | null;
  /** The calendar's name, as the feed itself says it. */
  name: string;
}

export function feedTitle(item: TitledFeed): string {
  if (item.feed.teamId !== null) return item.feed.label ?? item.name;
  const scope = item.eventTitle ?? (item.feed.upstreamEventId === null ? 'All event types' : 'An event type');
  return item.feed.label ?? scope;
}
