// How slotfeed knows its own events in a person's calendar: each VEVENT it writes carries
//   X-SLOTFEED-FEED:<feed id>
// (an RFC 5545 §3.8.8.2 non-standard property, kept by servers and ignored by calendar apps). The client lists,
// changes and deletes only events whose marker names the feed at hand: a person's own events have no marker, and
// another feed's name another id. Read here with a small content-line reader: only a VEVENT's own UID and marker
// are wanted, not its sub-components (VALARM) or the calendar's time zones.

/** The property, in each VEVENT slotfeed writes, that names the feed the event comes from. */
export const FEED_MARKER_PROPERTY = 'X-SLOTFEED-FEED';
/**
 * Binds the marker to the event's UID: slotfeed's keyed proof of (feed, UID). Calendar apps keep X- properties
 * when a person duplicates an event, but give the copy a UID of its own, so a copy carries a proof that does not
 * fit its UID: slotfeed can tell its own events from a person's copies of them.
 */
export const EVENT_PROOF_PROPERTY = 'X-SLOTFEED-PROOF';

export interface EventIdentity {
  uid: string;
  /** The marker's value: the feed the event comes from; undefined for an event slotfeed did not write. */
  feedId: string | undefined;
  /** The proof's value, when the event carries one. */
  proof: string | undefined;
}

/** RFC 5545 §3.3.11 TEXT: backslash escapes. */
function unescapeText(value: string): string {
  return value.replace(/\\([\\;,nN])/g, (_, c: string) => (c === 'n' || c === 'N' ? '\n' : c));
}

/** A content line's name and value: the name ends at the first ';' or ':', the value after the first ':' outside quotes. */
function contentLine(line: string): { name: string; value: string } | undefined {
  const nameEnd = line.search(/[;:]/);
  if (nameEnd <= 0) return undefined;
  let quoted = false;
  for (let i = nameEnd; i < line.length; i++) {
    const c = line[i];
    if (c === '"') quoted = !quoted;
    else if (c === ':' && !quoted)
      return { name: line.slice(0, nameEnd).toUpperCase(), value: line.slice(i + 1) };
  }
  return undefined;
}

/** The first VEVENT's UID and marker, or undefined when the text holds no VEVENT with a UID. */
export function readEventIdentity(icalendar: string): EventIdentity | undefined {
  // Unfolding (§3.1): a line break followed by a space or tab continues the line.
  const lines = icalendar.replace(/\r?\n[ \t]/g, '').split(/\r?\n/);
  const open: string[] = [];
  let uid: string | undefined;
  let feedId: string | undefined;
  let proof: string | undefined;
  for (const line of lines) {
    const parsed = contentLine(line);
    if (!parsed) continue;
    const { name, value } = parsed;
    if (name === 'BEGIN') {
      open.push(value.trim().toUpperCase());
    } else if (name === 'END') {
      if (open.pop() === 'VEVENT' && uid !== undefined) return { uid, feedId, proof };
      if (!open.includes('VEVENT')) [uid, feedId, proof] = [undefined, undefined, undefined];
    } else if (open.at(-1) === 'VEVENT') {
      if (name === 'UID') uid = unescapeText(value);
      else if (name === FEED_MARKER_PROPERTY) feedId = unescapeText(value);
      else if (name === EVENT_PROOF_PROPERTY) proof = value.trim();
    }
  }
  return undefined;
}
