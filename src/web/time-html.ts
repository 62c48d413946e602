// A time as pages show it: a <time> element with the machine-readable instant, its text in the account's zone
// (named) or relative to now, and the other form beside it, so no page shows a bare UTC string.
import { html, type Raw } from './html.js';
import { localTime } from '../lib/local-time.js';
import { relativeTime } from './time-format.js';

export interface ShownTimeOptions {
  /** Which form leads: the local time (admin pages, exact) or how long ago (the owner's page, at a glance). */
  lead?: 'local' | 'relative';
  /** What stands for no time at all. */
  none?: string;
}

export function shownTime(
  date: Date | null,
  zone: string | null,
  now: Date,
  options: ShownTimeOptions = {},
): Raw {
  if (date === null) return html`<span class="muted">${options.none ?? '—'}</span>`;
  const [lead, aside] =
    options.lead === 'relative'
      ? [relativeTime(date, now), localTime(date, zone)]
      : [localTime(date, zone), relativeTime(date, now)];
  return html`<time datetime="${date.toISOString()}">${lead}</time>
    <span class="muted small">(${aside})</span>`;
}
