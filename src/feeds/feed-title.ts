// A feed's title as slotfeed shows it (the owner's feed cards, the week preview, the share page): its label, or
// for a person's feed the event types and what of them it shows, for a team's the calendar name its bytes carry.
// Two unnamed feeds of all event types were both "All event types"; what each shows, and over how many days,
// tells them apart.
import { VIEW_NAMES, viewOf, type FeedOptions } from './feed-options.js';

export interface TitledFeed {
  /** What of a feed record its title reads. */
  feed: { teamId: string | null; label: string | null; upstreamEventId: string | null; options: FeedOptions };
  /** The title of the event type a person's feed names (null: none, or not known). */
  eventTitle: string | null;
  /** The calendar's name, as the feed itself says it. */
  name: string;
}

export function feedTitle(item: TitledFeed): string {
  if (item.feed.teamId !== null) return item.feed.label ?? item.name;
  if (item.feed.label !== null) return item.feed.label;
  const scope = item.eventTitle ?? (item.feed.upstreamEventId === null ? 'All event types' : 'An event type');
  const { days } = item.feed.options;
  return `${scope}: ${VIEW_NAMES[viewOf(item.feed.options)]}${days === undefined ? '' : `, ${days} days`}`;
}

/**
 * A person's feed titled from its connection's event types (id → title): one no longer listed is named by its id,
 * which is what an operator can look up. The admin's pages and `connections show` title feeds so.
 */
export function personFeedTitle(feed: TitledFeed['feed'], eventTitles: ReadonlyMap<string, string>): string {
  const { upstreamEventId } = feed;
  const eventTitle = upstreamEventId === null ? null : (eventTitles.get(upstreamEventId) ?? upstreamEventId);
  // A person's feed never reads the calendar's name (a team's does).
  return feedTitle({ feed, eventTitle, name: '' });
}
