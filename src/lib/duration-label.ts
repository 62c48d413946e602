// How a length of time reads to a person, wherever slotfeed prints one: an event type's duration in a feed, a
// team feed's minimum, a report's staleness.

/** "30 min", "1 h", "1 h 30 min". */
export function durationLabel(minutes: number): string {
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  if (hours === 0) return `${rest} min`;
  return rest === 0 ? `${hours} h` : `${hours} h ${rest} min`;
}

/** Seconds as durationLabel reads them, to the minute; under a minute, "45 s". */
export function secondsLabel(seconds: number): string {
  return seconds < 59.5 ? `${Math.round(seconds)} s` : durationLabel(Math.round(seconds / 60));
}
