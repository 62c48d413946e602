// The plain data a feed is rendered from: what the store reads and the renderer takes. No Prisma types here,
// so feeds/ stays free of I/O and can be tested with literals.

export interface FeedEventType {
  title: string;
  durationMinutes: number;
  /** The event type's booking page. */
  url: string | null;
  /** As the scheduling service gives it, usually '#rrggbb'. */
  color: string | null;
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
