// Form fields the feed forms share (the admin's, a team's, the owner's), with the bounds the options schema
// declares (feeds/feed-options.ts), so a browser refuses what the server would.
import { FEED_DAYS_MAX } from '../../feeds/feed-options.js';
import { html, type Raw } from '../html.js';

export function daysAheadField(id: string): Raw {
  return html`<div class="field">
    <label for="${id}">Days ahead</label>
    <input id="${id}" name="days" type="number" min="1" max="${FEED_DAYS_MAX}" inputmode="numeric" />
    <span class="hint">Empty: the installation’s default.</span>
  </div>`;
}

/** A note for operators, shown in lists. */
export function labelField(id: string): Raw {
  return html`<div class="field">
    <label for="${id}">Label</label>
    <input id="${id}" name="label" maxlength="100" />
  </div>`;
}
