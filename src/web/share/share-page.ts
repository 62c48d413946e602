// The share page's HTML (issue 37): complete without scripts, in the zone asked for (the owner's when none);
// public/share.js only moves a first visit to the browser's own zone and submits the zone picker on change.
// Its own shell rather than renderPage's: the viewer is nobody's session, so no site navigation, and the page
// must be the same bytes for everyone who asks the same thing (its ETag is a hash of them), so no nonce.
import { assetUrl } from '../assets.js';
import type { FeedLinks } from '../feed-links.js';
import { escapeHtml, html, type Raw } from '../html.js';
import { validZone, type ShareWeek, type ShownBlock, type ShownDay } from './share-week.js';

export interface SharePageModel {
  ownerName: string;
  feedTitle: string;
  /** The owner's zone: what the page shows without a choice. */
  ownerZone: string;
  week: ShareWeek;
  days: ShownDay[];
  copyText: string;
  /** Free time not shown at all (a busy-only feed): the page says so rather than "no free time". */
  showsFreeTime: boolean;
  /** The page's own path, '/share/{secret}' (or its embeddable variant). */
  path: string;
  textPath: string;
  subscribe: FeedLinks & { download: string };
  expiresAt: string | null;
  embedded: boolean;
}

let zoneNames: string[] | undefined;

/** Every zone the picker offers: the runtime's IANA list, with UTC. */
function allZones(): string[] {
  zoneNames ??= [
    ...new Set(['UTC', ...Intl.supportedValuesOf('timeZone')].flatMap((zone) => validZone(zone) ?? [])),
  ].sort();
  return zoneNames;
}

function query(week: number, zone: string): string {
  return `?week=${week}&zone=${encodeURIComponent(zone)}`;
}

function blockItem(block: ShownBlock): Raw {
  const times = html`<time datetime="${block.startsAt.toISOString()}">${block.from}</time>–<time
      datetime="${block.endsAt.toISOString()}"
      >${block.to}</time
    >`;
  const urls = [...new Set(block.offers.flatMap((o) => (o.url ? [o.url] : [])))];
  const [only] = urls;
  const head =
    urls.length === 1 && only
      ? html`<a class="share-block-time" href="${only}" rel="noopener"
          >${times}<span class="visually-hidden">: book</span></a
        >`
      : html`<span class="share-block-time">${times}</span>`;
  const offers =
    block.offers.length > 0
      ? html`<span class="share-offers"
          >${block.offers.map((o, i) => html`${i > 0 ? ', ' : ''}${urls.length > 1 && o.url ? html`<a href="${o.url}" rel="noopener">${o.title}</a>` : o.title}`)}</span
        >`
      : block.free.length > 0
        ? html`<span class="share-offers">Free: ${block.free.join(', ')}</span>`
        : '';
  return html`<li
    class="share-block"
    data-start="${block.startsAt.toISOString()}"
    data-end="${block.endsAt.toISOString()}"
  >
    ${head} ${offers}
  </li>`;
}

/** Whether a time on the page links to a booking page (a team's, or a feed naming none, has none to pick). */
function offersBooking(model: SharePageModel): boolean {
  return model.days.some((day) => day.blocks.some((block) => block.offers.some((offer) => offer.url)));
}

function dayItem(day: ShownDay): Raw {
  return html`<li class="share-day" data-date="${day.date}">
    <h3>${day.label}</h3>
    ${
      day.blocks.length > 0
        ? html`<ul class="share-blocks">
            ${day.blocks.map(blockItem)}
          </ul>`
        : html`<p class="muted">No free time</p>`
    }
  </li>`;
}

function zonePicker(model: SharePageModel): Raw {
  const current = model.week.zone;
  return html`<form method="get" action="${model.path}" class="share-zone" data-share-zone>
    <input type="hidden" name="week" value="${model.week.index}" />
    <label for="share-zone">Time zone</label>
    <select id="share-zone" name="zone">
      ${(allZones().includes(current) ? allZones() : [current, ...allZones()]).map(
        (zone) =>
          html`<option value="${zone}" ${zone === current ? html`selected` : ''}>
            ${zone}${zone === model.ownerZone ? ' (owner’s)' : ''}
          </option>`,
      )}
    </select>
    <button type="submit" class="button small">Show</button>
  </form>`;
}

function weekNav(model: SharePageModel): Raw {
  const { week } = model;
  const first = model.days[0]?.label ?? '';
  const last = model.days[model.days.length - 1]?.label ?? '';
  return html`<nav class="share-weeks" aria-label="Weeks">
    ${
      week.hasPrevious
        ? html`<a class="button small" rel="prev" href="${model.path}${query(week.index - 1, week.zone)}"
            >← Previous week</a
          >`
        : html`<span></span>`
    }
    <p class="share-range">${first} – ${last}</p>
    ${
      week.hasNext
        ? html`<a class="button small" rel="next" href="${model.path}${query(week.index + 1, week.zone)}"
            >Next week →</a
          >`
        : html`<span></span>`
    }
  </nav>`;
}

function takeItWithYou(model: SharePageModel): Raw {
  const lines = Math.max(2, model.copyText.split('\n').length);
  const s = model.subscribe;
  return html`<section class="card" aria-labelledby="copy-title">
      <h2 id="copy-title">Copy these times</h2>
      <label for="share-copy-text" class="visually-hidden">These times as text</label>
      <textarea id="share-copy-text" class="share-copy" readonly rows="${lines}">${model.copyText}</textarea>
      <p class="actions">
        <button type="button" class="button" data-copy="share-copy-text">Copy these times</button>
        <a href="${model.textPath}${query(model.week.index, model.week.zone)}">As plain text</a>
      </p>
    </section>
    <section class="card" aria-labelledby="subscribe-title">
      <h2 id="subscribe-title">Subscribe</h2>
      <p class="muted">
        Keep these free times in your calendar app; they stay current while this link lasts.
      </p>
      <p class="actions share-subscribe">
        <a class="button" href="${s.webcal}">Calendar app (webcal)</a>
        <a class="button" href="${s.google}" rel="noopener">Google Calendar</a>
        <a class="button" href="${s.outlook}" rel="noopener">Outlook.com</a>
        <a class="button" href="${s.microsoft365}" rel="noopener">Microsoft 365</a>
        <a class="button" href="${s.download}" download>Download .ics</a>
      </p>
    </section>`;
}

export function renderSharePage(model: SharePageModel): string {
  const title = `${model.ownerName}: ${model.feedTitle}`;
  const body = html`<main id="main" class="share${model.embedded ? ' share-embedded' : ''}">
    <header class="share-head">
      <h1 class="share-owner">${model.ownerName}</h1>
      <p class="share-feed">${model.feedTitle}</p>
      <p class="muted">
        When ${model.ownerName} is free, in <strong data-share-zone-name>${model.week.zone}</strong>.${
          offersBooking(model) ? ' Pick a time to book it.' : ''
        }
      </p>
    </header>
    ${zonePicker(model)} ${weekNav(model)}
    <section aria-labelledby="days-title">
      <h2 id="days-title" class="visually-hidden">Free time by day</h2>
      ${
        model.showsFreeTime
          ? html`<ol class="share-days">
              ${model.days.map(dayItem)}
            </ol>`
          : html`<p>This calendar shares no free time.</p>`
      }
    </section>
    ${model.embedded ? '' : takeItWithYou(model)}
    <p class="muted share-expiry">
      ${model.expiresAt === null ? 'This link does not expire.' : `This link works until ${model.expiresAt}.`}
    </p>
  </main>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><meta name="referrer" content="no-referrer"><meta name="color-scheme" content="light dark">
<title>${escapeHtml(title)}</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="${assetUrl('slotfeed.css')}">
<script src="${assetUrl('slotfeed.js')}" defer></script>
<script src="${assetUrl('share.js')}" defer></script></head>
<body>
${model.embedded ? '' : '<a class="skip-link" href="#main">Skip to content</a>\n'}${body.html}
</body></html>
`;
}

/** The plain pages for a link that ended or never was: no owner, no feed, nothing but the fact. */
export function renderShareGonePage(status: 404 | 410): string {
  const [title, text] =
    status === 410
      ? ['This link has expired', 'The person who shared it set it to stop working. Ask them for a new one.']
      : ['No such link', 'This link does not exist, or the person who shared it has withdrawn it.'];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><meta name="color-scheme" content="light dark">
<title>${title}</title><link rel="icon" href="data:,"><link rel="stylesheet" href="${assetUrl('slotfeed.css')}"></head>
<body><main id="main" class="share"><h1>${title}</h1><p>${text}</p></main></body></html>
`;
}
