// The plain data a feed is rendered from: what the store reads and the renderer takes. No Prisma types here,
// so feeds/ stays free of I/O and can be tested with literals.

export interface FeedEventType {
  title: string;
  durationMinutes: number;
  /** The event type's booking page. */
  url: string | null;
  /** As the scheduling service gives it, usually '#rrggbb'. */
  color: string | null;
  enabled: boolean;
  /** `is_secret` upstream: bookable only through its link, so published only by a feed that names it. */
  secret: boolean;
}

export interface FeedSlot {
  /** The upstream event type's id. */
  eventId: string;
  startsAt: Date;
  endsAt: Date;
  /** Rises when the slot's end moved while it stayed open (iCalendar SEQUENCE). */
  sequence: number;
  firstSeenAt: Date;
  lastChangedAt: Date;
}

/** An inferred booking (store/snapshots: slotfeed_inferred_bookings): time that became unavailable. */
export interface FeedBooking {
  startsAt: Date;
  endsAt: Date;
  /** The sync that first saw it. */
  detectedAt: Date;
}

/** What a subscriber's calendar is told about an event's changes: SEQUENCE, and DTSTAMP = LAST-MODIFIED. */
export interface EventRevision {
  sequence: number;
  changedAt: Date;
}

/** One VEVENT as it will be written, before its revision is known. */
export interface FeedEvent {
  uid: string;
  startsAt: Date;
  endsAt: Date;
  summary: string;
  description?: string;
  url?: string;
  /** A CSS3 colour name (RFC 7986 COLOR). */
  color?: string;
  /** Busy time: TRANSP:OPAQUE; everything else a feed shows is free (TRANSPARENT). */
  busy?: boolean;
  /** The revision from stored history, used for an event never published before. */
  history: EventRevision;
}

/**
 * Which event types a feed may show: enabled ones only; a secret one only when the feed names it (its owner
 * chose to publish it), never in a feed of all event types.
 */
export function includedEventIds(
  eventTypes: ReadonlyMap<string, Pick<FeedEventType, 'enabled' | 'secret'>>,
  namedEventId: string | null,
): Set<string> {
  const included = new Set<string>();
  for (const [id, eventType] of eventTypes) {
    if (!eventType.enabled) continue;
    if (namedEventId !== null ? id !== namedEventId : eventType.secret) continue;
    included.add(id);
  }
  return included;
}
