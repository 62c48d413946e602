// The owner's feeds on "Your availability" (/me): each feed's card with its address in every form calendar apps
// take, what it shows and the actions on it (preview, replace, revoke), and the form that makes another.
import { FEED_DAYS_MAX, FEED_VIEWS, viewOf, type FeedView } from '../../feeds/feed-options.js';
import type { FeedRecord } from '../../store/feeds.js';
import type { FeedLinks } from '../feed-links.js';
import { html, Raw } from '../html.js';
import { feedTitle } from '../../feeds/feed-title.js';
import { postButton } from '../post-button.js';

export const VIEW_LABELS: Record<FeedView, string> = {
  free: 'Free time (blocks)',
  slots: 'Bookable slots',
  busy: 'Busy time (bookings)',
  'free+busy': 'Free and busy time',
};

export interface OwnerFeed {
  feed: FeedRecord;
  /** Null when the feed's token was not kept sealed: the owner can only replace it. */
  links: FeedLinks | null;
  /** The webcal URL as an SVG QR code (for a phone's camera); null with links. */
  qrSvg: string | null;
  eventTitle: string | null;
  /** The calendar's name, as the feed itself says it. */
  name: string;
}

export { feedTitle };

/** Shows this feed in the week preview: the page again, with the preview on it. */
export function previewLink(item: OwnerFeed): Raw {
  if (item.links === null) return html``;
  return html`<a
    class="button small"
    href="/me?preview=${item.feed.id}#week-preview"
    data-preview-feed="${item.feed.id}"
    >Preview this feed</a
  >`;
}

/**
 * Names a feed for its owner: two feeds of all event types were both titled "All event types", told apart only
 * by a small subtitle. The name is what the card, the preview and the CalDAV sections show first.
 */
function nameForm(item: OwnerFeed): Raw {
  const { feed } = item;
  const id = `name-${feed.id}`;
  return html`<form method="post" action="/me/feeds/${feed.id}/name" class="inline-form name-form">
    <div class="field">
      <label for="${id}">Name</label>
      <input
        id="${id}"
        name="label"
        maxlength="100"
        value="${feed.label ?? ''}"
        placeholder="${feedTitle(item)}"
      />
    </div>
    <button type="submit" class="button small">Rename</button>
  </form>`;
}

/** Changes the view of an existing feed under the same address. */
function viewForm(feed: FeedRecord): Raw {
  const current = viewOf(feed.options);
  const id = `view-${feed.id}`;
  return html`<form method="post" action="/me/feeds/${feed.id}/view" class="inline-form view-form">
    <div class="field">
      <label for="${id}">Shows</label>
      <select id="${id}" name="view">
        ${FEED_VIEWS.map(
          (view) =>
            html`<option value="${view}" ${view === current ? html`selected` : ''}>
              ${VIEW_LABELS[view]}
            </option>`,
        )}
      </select>
    </div>
    <button type="submit" class="button small">Change</button>
  </form>`;
}

/** A feed's address in every form calendar apps take, or a note that it can only be replaced. */
export function subscribeBlock(item: OwnerFeed, input: { loopback: boolean }): Raw {
  const { feed, links } = item;
  const urlId = `feed-url-${feed.id}`;
  const webcalId = `feed-webcal-${feed.id}`;
  return html` ${
    links === null
      ? html`<p class="warning" id="feed-hidden-${feed.id}">
          ${
            feed.teamId === null
              ? 'This feed was made before addresses could be shown again. Replace its address to see a new one here (calendars subscribed to the old one must then subscribe again).'
              : 'This team feed’s address was not kept for showing again: ask an administrator to replace it.'
          }
        </p>`
      : html`<div class="field">
            <label for="${urlId}">Feed address</label>
            <div class="copy-field">
              <input id="${urlId}" type="text" readonly value="${links.https}" />
              <button type="button" data-copy="${urlId}">Copy</button>
            </div>
          </div>
          <div class="field">
            <label for="${webcalId}">For calendar apps (webcal)</label>
            <div class="copy-field">
              <input id="${webcalId}" type="text" readonly value="${links.webcal}" />
              <button type="button" data-copy="${webcalId}">Copy</button>
            </div>
          </div>
          <div class="feed-links" aria-label="Subscribe">
            <a class="button small primary" href="${links.webcal}">Subscribe (Apple, Thunderbird, Outlook)</a>
            <a class="button small" href="${links.google}" target="_blank" rel="noopener noreferrer"
              >Google Calendar</a
            >
            <a class="button small" href="${links.outlook}" target="_blank" rel="noopener noreferrer"
              >Outlook.com</a
            >
            <a class="button small" href="${links.microsoft365}" target="_blank" rel="noopener noreferrer"
              >Microsoft 365</a
            >
          </div>
          ${
            input.loopback
              ? html`<p class="warning small" data-loopback-note>
                  This address is on this computer (${new URL(links.https).host}): a calendar app here can
                  subscribe, but Google Calendar and Outlook fetch feeds from their own servers, which cannot
                  reach it. Set PUBLIC_BASE_URL to an address they can reach.
                </p>`
              : ''
          }
          ${
            item.qrSvg === null
              ? ''
              : html`<details>
                  <summary>QR code for a phone</summary>
                  <div class="qr" role="img" aria-label="QR code of the webcal address of ${feedTitle(item)}">
                    ${new Raw(item.qrSvg)}
                  </div>
                </details>`
          }`
  }`;
}

/** `caldav`: the feed's CalDAV destinations section (caldav-destinations-section.ts), below its actions. */
export function feedCard(item: OwnerFeed, input: { loopback: boolean; caldav?: Raw; shares?: Raw }): Raw {
  const { feed } = item;
  const days = feed.options.days === undefined ? 'the usual days ahead' : `${feed.options.days} days ahead`;
  const scope = item.eventTitle ?? (feed.upstreamEventId === null ? 'all event types' : 'an event type');
  const description = `${VIEW_LABELS[viewOf(feed.options)]}; ${scope}; ${days}`;
  return html`<section class="card" data-feed-id="${feed.id}" aria-labelledby="feed-title-${feed.id}">
    <h3 id="feed-title-${feed.id}">${feedTitle(item)}</h3>
    <p class="muted small">${description}</p>
    ${subscribeBlock(item, input)} ${nameForm(item)} ${viewForm(feed)}
    <div class="actions">
      ${previewLink(item)}
      ${postButton(`/me/feeds/${feed.id}/rotate`, 'Replace address', {
        confirm:
          'Replace this feed’s address? The old one stops working at once: everyone subscribed must subscribe again with the new one.',
        id: `rotate-${feed.id}`,
      })}
      ${postButton(`/me/feeds/${feed.id}/revoke`, 'Revoke', {
        confirm:
          'Revoke this feed? Its address stops working for good and subscribed calendars stop updating.',
        danger: true,
        id: `revoke-${feed.id}`,
      })}
    </div>
    ${input.shares ?? ''} ${input.caldav ?? ''}
  </section>`;
}

export function newFeedForm(input: { eventTypes: { id: string; title: string; enabled: boolean }[] }): Raw {
  return html`<details class="card" id="new-feed">
    <summary>Make another feed</summary>
    <form method="post" action="/me/feeds">
      <div class="form-grid">
        <div class="field">
          <label for="new-feed-event">Event type</label>
          <select id="new-feed-event" name="upstreamEventId">
            <option value="">All event types</option>
            ${input.eventTypes.map(
              (e) => html`<option value="${e.id}">${e.title}${e.enabled ? '' : ' (disabled)'}</option>`,
            )}
          </select>
        </div>
        <div class="field">
          <label for="new-feed-view">Shows</label>
          <select id="new-feed-view" name="view">
            ${FEED_VIEWS.map((view) => html`<option value="${view}">${VIEW_LABELS[view]}</option>`)}
          </select>
        </div>
        <div class="field">
          <label for="new-feed-days">Days ahead</label>
          <input
            id="new-feed-days"
            name="days"
            type="number"
            min="1"
            max="${FEED_DAYS_MAX}"
            inputmode="numeric"
          />
          <span class="hint">Empty: the usual.</span>
        </div>
        <div class="field">
          <label for="new-feed-label">Name (for you)</label>
          <input id="new-feed-label" name="label" maxlength="100" />
        </div>
      </div>
      <button type="submit" class="button primary" id="create-feed">Create feed</button>
    </form>
  </details>`;
}
