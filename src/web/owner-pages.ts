// HTML of the owner's pages: "Your availability" (/me) with every feed's URL in each form calendar apps take,
// the actions an owner has (new feed, replace or revoke a URL, pause, leave a team, delete everything), and
// the pages around it (signed out, not connected, deleted). Every destructive form asks first (data-confirm).
import type { FastifyReply } from 'fastify';
import {
  describeTeamFeedOptions,
  FEED_DAYS_MAX,
  FEED_VIEWS,
  viewOf,
  type FeedView,
} from '../feeds/feed-options.js';
import type { FeedRecord } from '../store/feeds.js';
import type { TeamRecord } from '../store/teams.js';
import type { WebhookEndpointRecord } from '../store/webhooks.js';
import type { FeedLinks } from './feed-links.js';
import { html, Raw, sendPage } from './html.js';
import { shownTime } from './time-html.js';
import { postButton } from './post-button.js';

export const OWNER_NOTICES: Record<string, string> = {
  connected: 'Connected. Your free time is now a calendar feed: subscribe to it below.',
  reconnected:
    'Access renewed. Your feed addresses are unchanged; calendars subscribed to them need nothing.',
  'signed-in': 'Signed in.',
  'feed-created': 'Feed created: its address is below.',
  rotated: 'Address replaced. The old one stopped working: subscribe again with the new one.',
  revoked: 'Feed revoked: its address no longer works.',
  paused: 'Syncing paused. Your feeds keep showing the last free time slotfeed saw, marked as not updated.',
  resumed: 'Syncing resumed; a sync is queued.',
  left: 'You left the team.',
  'webhook-deleted': 'Webhook endpoint deleted: nothing more is sent to it.',
  'view-changed':
    'Changed what the feed shows. Its address is the same; calendars show the change at their next refresh.',
};

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

export interface OwnerHomeInput {
  connection: {
    id: string;
    displayName: string | null;
    email: string | null;
    timezone: string | null;
    status: 'active' | 'needs_reauth' | 'disabled';
    lastSyncAt: Date | null;
    lastSyncOutcome: string | null;
    lastGoodSyncAt: Date | null;
    nextSyncAt: Date;
  };
  feeds: OwnerFeed[];
  eventTypes: { id: string; title: string; enabled: boolean }[];
  teams: TeamRecord[];
  /** Each team's feeds, by team id: members subscribe to them here. */
  teamFeeds: Map<string, OwnerFeed[]>;
  /** The account's webhook endpoints. */
  webhooks: WebhookEndpointRecord[];
  notice?: string;
  now: Date;
  /** PUBLIC_BASE_URL is this machine: cloud calendars cannot fetch from it. */
  loopback: boolean;
  /** The week preview, or an empty fragment when no feed's URL can be shown. */
  preview: Raw;
}

const STATUS: Record<OwnerHomeInput['connection']['status'], { label: string; badge: string; help: string }> =
  {
    active: { label: 'Syncing', badge: 'ok', help: 'slotfeed checks Calendbook on a schedule.' },
    needs_reauth: {
      label: 'Needs you',
      badge: 'warn',
      help: 'Calendbook no longer accepts slotfeed’s access: connect again to renew it. Until then your feeds show the last free time seen.',
    },
    disabled: {
      label: 'Paused',
      badge: 'error',
      help: 'Syncing is paused. Your feeds keep showing the last free time seen, marked as not updated.',
    },
  };

export function feedTitle(item: OwnerFeed): string {
  if (item.feed.teamId !== null) return item.feed.label ?? item.name;
  const scope = item.eventTitle ?? (item.feed.upstreamEventId === null ? 'All event types' : 'An event type');
  return item.feed.label ?? scope;
}

/** Shows this feed in the week preview: the page again, with the preview on it. */
function previewLink(item: OwnerFeed): Raw {
  if (item.links === null) return html``;
  return html`<a
    class="button small"
    href="/me?preview=${item.feed.id}#week-preview"
    data-preview-feed="${item.feed.id}"
    >Preview this feed</a
  >`;
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
function subscribeBlock(item: OwnerFeed, input: OwnerHomeInput): Raw {
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

function feedCard(item: OwnerFeed, input: OwnerHomeInput): Raw {
  const { feed } = item;
  const days = feed.options.days === undefined ? 'the usual days ahead' : `${feed.options.days} days ahead`;
  const description = `${VIEW_LABELS[viewOf(feed.options)]}; ${item.eventTitle ?? 'all event types'}; ${days}`;
  return html`<section class="card" data-feed-id="${feed.id}" aria-labelledby="feed-title-${feed.id}">
    <h3 id="feed-title-${feed.id}">${feedTitle(item)}</h3>
    <p class="muted small">${description}</p>
    ${subscribeBlock(item, input)} ${viewForm(feed)}
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
  </section>`;
}

function newFeedForm(input: OwnerHomeInput): Raw {
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

function teamFeedCard(item: OwnerFeed, input: OwnerHomeInput): Raw {
  return html`<div class="team-feed" data-feed-id="${item.feed.id}">
    <h4 id="feed-title-${item.feed.id}">${feedTitle(item)}</h4>
    <p class="muted small">${describeTeamFeedOptions(item.feed.options)}</p>
    ${subscribeBlock(item, input)}
    <div class="actions">${previewLink(item)}</div>
  </div>`;
}

function teamsSection(input: OwnerHomeInput): Raw {
  const { teams } = input;
  if (teams.length === 0) return html``;
  return html`<section class="card" id="teams">
    <h2>Your teams</h2>
    <p class="muted small">
      A team’s feeds show when all of you are free, or who of you is. Anyone in the team may subscribe; an
      administrator makes and replaces them.
    </p>
    <ul class="list-plain">
      ${teams.map((team) => {
        const feeds = input.teamFeeds.get(team.id) ?? [];
        return html`<li data-team-id="${team.id}">
          <h3>${team.name}</h3>
          <p class="muted small">
            With ${team.members.map((m) => m.displayName ?? 'an unnamed member').join(', ')}
          </p>
          ${feeds.length === 0 ? html`<p class="muted small">No team feeds yet.</p>` : feeds.map((item) => teamFeedCard(item, input))}
          ${postButton(`/me/teams/${team.id}/leave`, 'Leave', {
            confirm: `Leave ${team.name}? Your free time stops counting in its feeds.`,
          })}
        </li>`;
      })}
    </ul>
  </section>`;
}

/** For developers: endpoints that hear of changes to this account, signed; the secret is shown once. */
function webhooksSection(input: OwnerHomeInput): Raw {
  return html`<details class="card" id="webhooks">
    <summary>Webhooks (for developers)</summary>
    <p class="muted small">
      slotfeed POSTs a signed JSON message (Standard Webhooks) to each address below when your availability
      changes, a booking is seen, or the account needs connecting again.
    </p>
    ${
      input.webhooks.length === 0
        ? html`<p class="muted small">No webhook endpoints.</p>`
        : html`<ul class="list-plain">
            ${input.webhooks.map(
              (endpoint) =>
                html`<li data-endpoint-id="${endpoint.id}">
                  <code>${endpoint.url}</code>
                  <span class="muted small">${endpoint.events.join(', ')}</span>
                  ${
                    endpoint.disabledAt
                      ? html`<p class="error small">Disabled: ${endpoint.disabledReason ?? ''}</p>`
                      : ''
                  }
                  ${postButton(`/me/webhooks/${endpoint.id}/delete`, 'Delete', {
                    confirm: 'Delete this webhook endpoint? Nothing more is sent to it.',
                  })}
                </li>`,
            )}
          </ul>`
    }
    <form method="post" action="/me/webhooks" class="inline-form">
      <div class="field">
        <label for="webhook-url">New endpoint URL</label>
        <input
          id="webhook-url"
          name="url"
          type="url"
          required
          maxlength="2000"
          placeholder="https://example.com/hooks"
        />
      </div>
      <button type="submit" class="button small">Add</button>
    </form>
  </details>`;
}

/** The page after adding an endpoint: its signing secret, once. */
export function webhookSecretPage(reply: FastifyReply, input: { url: string; secret: string }): FastifyReply {
  return sendPage(reply, 200, {
    title: 'Webhook endpoint added',
    nav: 'owner',
    body: html`<section class="card">
      <h1>Webhook endpoint added</h1>
      <p>Deliveries to <code>${input.url}</code> are signed with this secret. It is shown only now.</p>
      <div class="field">
        <label for="new-secret">Signing secret</label>
        <div class="copy-field">
          <input id="new-secret" type="text" readonly value="${input.secret}" />
          <button type="button" class="button" data-copy="new-secret">Copy</button>
        </div>
      </div>
      <p><a href="/me#webhooks">Back to your availability</a></p>
    </section>`,
  });
}

export function ownerHomePage(reply: FastifyReply, input: OwnerHomeInput): FastifyReply {
  const { connection, now } = input;
  const zone = connection.timezone;
  const status = STATUS[connection.status];
  const name = connection.displayName ?? connection.email ?? 'your Calendbook account';
  return sendPage(reply, 200, {
    title: 'Your availability',
    nav: 'owner',
    body: html`<h1>Your availability</h1>
      ${input.notice ? html`<p class="notice" role="status" id="notice">${input.notice}</p>` : ''}
      <section class="card" id="status">
        <h2>${name}</h2>
        <dl class="facts">
          <dt>Status</dt>
          <dd><span class="badge ${status.badge}" id="connection-status">${status.label}</span></dd>
          <dt>Last checked</dt>
          <dd id="last-sync">
            ${shownTime(connection.lastSyncAt, zone, now, { lead: 'relative', none: 'never' })}
          </dd>
          <dt>Times shown in</dt>
          <dd>${zone ?? 'UTC (your Calendbook time zone arrives with the first sync)'}</dd>
        </dl>
        <p class="muted small">${status.help}</p>
        <div class="actions">
          ${
            connection.status === 'disabled'
              ? postButton('/me/resume', 'Resume syncing', { id: 'resume' })
              : postButton('/me/pause', 'Pause syncing', {
                  confirm: 'Pause syncing? Your feeds keep the free time seen so far until you resume.',
                  id: 'pause',
                })
          }
          ${connection.status === 'needs_reauth' ? html`<a class="button small primary" href="/connect">Connect again</a>` : ''}
        </div>
      </section>
      <h2>Your feeds</h2>
      <p class="muted">
        Anyone with a feed’s address sees your free time (never what you are doing). Keep the addresses
        private, and replace one if it was shared too widely.
      </p>
      ${
        input.feeds.length === 0
          ? html`<p class="muted" id="no-feeds">No feeds: make one below.</p>`
          : input.feeds.map((item) => feedCard(item, input))
      }
      ${newFeedForm(input)} ${input.preview} ${teamsSection(input)} ${webhooksSection(input)}
      <section class="card" id="delete">
        <h2>Disconnect and delete</h2>
        <p>
          Removes your connection and everything slotfeed stored for it: snapshots, history, feeds (their
          addresses stop working) and Calendbook tokens. It cannot be undone.
        </p>
        ${postButton('/me/delete', 'Disconnect and delete my data', {
          confirm:
            'Delete everything slotfeed stored for your account? Your feed addresses stop working at once. This cannot be undone.',
          danger: true,
          id: 'delete-my-data',
        })}
      </section>`,
  });
}

export function signedOutPage(reply: FastifyReply, status: number, message?: string): FastifyReply {
  return sendPage(reply, status, {
    title: 'Your availability',
    body: html`<section class="card narrow">
      <h1>Your availability</h1>
      <p>${message ?? 'Sign in with your Calendbook account to see your feeds.'}</p>
      <div class="actions">
        <a class="button primary" id="sign-in" href="/signin">Sign in with Calendbook</a>
        <a class="button" href="/connect">Connect your Calendbook account</a>
      </div>
    </section>`,
  });
}

export function notConnectedPage(reply: FastifyReply, who: string | null): FastifyReply {
  return sendPage(reply, 200, {
    title: 'Not connected yet',
    body: html`<section class="card narrow" id="not-connected">
      <h1>Not connected yet</h1>
      <p>
        ${who ?? 'This Calendbook account'} is not connected to slotfeed, so there is no page to show. Nothing
        was stored.
      </p>
      <a class="button primary" href="/connect">Connect your Calendbook account</a>
    </section>`,
  });
}

export function deletedPage(reply: FastifyReply): FastifyReply {
  return sendPage(reply, 200, {
    title: 'Deleted',
    body: html`<section class="card narrow" id="deleted">
      <h1>Your data is deleted</h1>
      <p>
        Your connection, its history, its feeds and its Calendbook tokens are gone, and you are signed out on
        every device. Feed addresses you shared no longer work.
      </p>
      <p>
        Calendbook offers no way for slotfeed to withdraw the access you granted, so do it there: in your
        Calendbook account settings, under connected applications, remove slotfeed.
      </p>
      <a class="button" href="/">slotfeed home</a>
    </section>`,
  });
}
