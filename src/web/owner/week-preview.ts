// The owner's week preview: FullCalendar with its iCalendar plugin reading the feed's own URL, so what it
// draws is what a subscribed calendar gets from the same bytes (it is a consumer of the feed, not a second
// rendering of the data). Scripts are same-origin files (src/web/assets.ts), loaded in dependency order; the
// page's CSP allows them and FullCalendar's injected <style>. Without scripts, the feed links still work.
import { assetUrl } from '../assets.js';
import { html, type Raw } from '../html.js';

export interface WeekPreviewInput {
  /** The feed's same-origin path, /feeds/<token>.ics. */
  feedPath: string;
  /** The account's zone; null: the browser's own. */
  timeZone: string | null;
  /** What the previewed feed is, for the heading. */
  feedTitle: string;
  /** The server's clock: the preview opens on its day (in the account's zone), as the feed's window does. */
  now: Date;
}

// ical.js and luxon first: the FullCalendar plugins read them as globals.
const SCRIPTS = [
  'ical',
  'luxon',
  'fullcalendar-core',
  'fullcalendar-daygrid',
  'fullcalendar-timegrid',
  'fullcalendar-icalendar',
  'fullcalendar-luxon3',
  'week-preview.js',
];

export function weekPreviewSection(input: WeekPreviewInput): Raw {
  const zone = input.timeZone;
  return html`<section
    class="card"
    id="week-preview"
    aria-labelledby="week-preview-title"
    data-feed="${input.feedPath}"
    data-time-zone="${zone ?? ''}"
    data-now="${input.now.toISOString()}"
  >
    <h2 id="week-preview-title">What subscribers see</h2>
    <p class="muted small">
      ${input.feedTitle}, read from the feed itself; times in
      ${zone ?? 'your browser’s time zone (your Calendbook zone is not known yet)'}.
    </p>
    <p role="status" data-preview-status>Loading the feed…</p>
    <div class="week-preview-calendar"></div>
    <noscript><p>The preview needs JavaScript; the feed works without it.</p></noscript>
    ${SCRIPTS.map((name) => html`<script src="${assetUrl(name)}" defer></script>`)}
  </section>`;
}
