// HTML of the admin pages: sign-in, the connections overview with its actions, and the page that shows a
// new feed URL once (after create or rotate).
import { FEED_VIEWS, VIEW_NAMES, viewOf } from '../../feeds/feed-options.js';
import { personFeedTitle } from '../../feeds/feed-title.js';
import { CALDAV_CLEANUP_NOTICES, cleanupsSection } from '../caldav/caldav-cleanups-section.js';
import type { CaldavCleanupRecord } from '../../store/caldav-cleanups.js';
import type { FastifyReply } from 'fastify';
import type { FeedRecord } from '../../store/feeds.js';
import type { FeedLinks } from '../feed-links.js';
import {
  CONNECTION_STATUSES,
  type ConnectionFilter,
  type ConnectionOverview,
} from '../../store/connection-admin.js';
import { html, scrollBox, sendPage, type Raw } from '../html.js';
import { shownTime } from '../time-html.js';
import { daysAheadField, labelField } from './feed-form-fields.js';
import { postButton } from '../post-button.js';

/** The administrator's home: the connections list. */
export const ADMIN_HOME = '/admin';
/** Where the admin's cleanup actions post (caldav-cleanups-section.ts); they lead back to ADMIN_HOME. */
export const ADMIN_CLEANUP_PATHS = { path: (id: string) => `/admin/caldav-cleanups/${id}` };

/** Where the admin's share link forms post (admin-share-link-routes.ts). */
export const ADMIN_SHARE_PATHS = {
  create: (feedId: string) => `/admin/feeds/${feedId}/share-links`,
  revoke: (linkId: string) => `/admin/share-links/${linkId}/revoke`,
};

export const SHARE_NOTICES: Record<string, string> = {
  'share-created': 'Share link made: its address is below.',
  'share-revoked': 'Share link revoked: its page no longer opens.',
};

export const ADMIN_NOTICES: Record<string, string> = {
  ...CALDAV_CLEANUP_NOTICES,
  'sync-queued': 'Sync queued; it runs as soon as a worker is free.',
  disabled: 'Connection disabled: it is no longer synced, and its feeds keep serving the last snapshot.',
  enabled: 'Connection enabled; a sync is queued.',
  'enabled-sync-later':
    'Connection enabled. Its sync could not be queued (Redis does not answer); the scheduler queues it once Redis is back.',
  revoked: 'Feed revoked: its URL now answers 404.',
  'already-disabled': 'Nothing changed: the connection was already disabled.',
  'already-enabled': 'Nothing changed: the connection was not disabled.',
};

/** A time in the account's zone (UTC, named, when unknown), with how long ago, for a machine-readable <time>. */
const STATUS_BADGE: Record<ConnectionOverview['status'], string> = {
  active: 'ok',
  needs_reauth: 'warn',
  disabled: 'error',
};

const STATUS_LABEL: Record<ConnectionOverview['status'], string> = {
  active: 'active',
  needs_reauth: 'needs re-authorisation',
  disabled: 'disabled',
};

/** A connection's status as the admin's pages show it: its label on a badge of its colour. */
export function statusBadge(status: string): Raw {
  const known = status in STATUS_LABEL ? (status as ConnectionOverview['status']) : undefined;
  const [badge, label] = known ? [STATUS_BADGE[known], STATUS_LABEL[known]] : ['', status];
  return html`<span class="badge ${badge}">${label}</span>`;
}

export function loginPage(
  reply: FastifyReply,
  status: number,
  options: { error?: string; next?: string } = {},
): FastifyReply {
  return sendPage(reply, status, {
    title: 'Admin sign-in',
    body: html`<section class="card narrow">
      <h1>Administrator sign-in</h1>
      <p class="muted">For the people who run this slotfeed installation.</p>
      ${options.error ? html`<p class="error alert" role="alert" id="login-error">${options.error}</p>` : ''}
      <form method="post" action="/admin/login">
        <div class="field">
          <label for="token">Admin token</label>
          <input id="token" name="token" type="password" autocomplete="current-password" required autofocus />
        </div>
        <input type="hidden" name="next" value="${options.next ?? ADMIN_HOME}" />
        <button type="submit" class="button primary">Sign in</button>
      </form>
    </section>`,
  });
}

function describeFeedRow(
  feed: FeedRecord,
  eventTitles: Map<string, string>,
  zone: string | null,
  now: Date,
): Raw {
  const scope =
    feed.upstreamEventId === null
      ? 'all event types'
      : (eventTitles.get(feed.upstreamEventId) ?? feed.upstreamEventId);
  const options = [
    VIEW_NAMES[viewOf(feed.options)],
    feed.options.days === undefined ? 'default days' : `${feed.options.days} days`,
    feed.options.merge ? 'merged' : null,
    feed.options.summary === undefined ? null : `“${feed.options.summary}”`,
  ].filter((o) => o !== null);
  return html`<li data-feed-id="${feed.id}">
    <strong>${personFeedTitle(feed, eventTitles)}</strong>
    <span class="muted small"
      >${scope}; ${options.join(', ')}; since ${shownTime(feed.createdAt, zone, now)}</span
    >
    <div class="actions">
      ${postButton(`/admin/feeds/${feed.id}/rotate`, 'Rotate URL', {
        attributes: html`data-action="rotate" data-feed-id="${feed.id}"`,
        confirm:
          'Replace this feed’s URL? The old URL stops working at once: everyone subscribed must subscribe again with the new one.',
      })}
      ${postButton(`/admin/feeds/${feed.id}/revoke`, 'Revoke', {
        attributes: html`data-action="revoke" data-feed-id="${feed.id}"`,
        confirm: 'Revoke this feed? Its URL stops working for good, and subscribed calendars stop updating.',
        danger: true,
      })}
    </div>
  </li>`;
}

function createFeedForm(connection: ConnectionOverview): Raw {
  const id = (name: string) => `${name}-${connection.id}`;
  return html`<details>
    <summary>New feed</summary>
    <form method="post" action="/admin/connections/${connection.id}/feeds">
      <div class="field">
        <label for="${id('event')}">Event type</label>
        <select id="${id('event')}" name="upstreamEventId">
          <option value="">All event types</option>
          ${connection.eventTypes.map((e) => html`<option value="${e.id}">${e.title}${e.enabled ? '' : ' (disabled)'}</option>`)}
        </select>
      </div>
      <div class="field">
        <label for="${id('view')}">Shows</label>
        <select id="${id('view')}" name="view">
          ${FEED_VIEWS.map((view) => html`<option value="${view}">${VIEW_NAMES[view]}</option>`)}
        </select>
      </div>
      ${labelField(id('label'))} ${daysAheadField(id('days'))}
      <div class="field">
        <label for="${id('summary')}">Free blocks’ title (views of free time only)</label>
        <input id="${id('summary')}" name="summary" maxlength="100" placeholder="Free" />
      </div>
      <div class="field check">
        <input id="${id('merge')}" name="merge" type="checkbox" value="true" />
        <label for="${id('merge')}">Merge adjacent slots (slots only)</label>
      </div>
      <button type="submit" class="button primary small">Create feed</button>
    </form>
  </details>`;
}

function connectionRow(connection: ConnectionOverview, now: Date): Raw {
  const zone = connection.timezone;
  const titles = new Map(connection.eventTypes.map((e) => [e.id, e.title]));
  const lastSync =
    connection.lastSyncOutcome === null
      ? html`<span class="muted">never</span>`
      : html`<span class="badge ${connection.lastSyncOutcome === 'succeeded' ? 'ok' : 'error'}"
            >${connection.lastSyncOutcome}</span
          >
          ${shownTime(connection.lastSyncAt, zone, now)}${
            connection.lastSyncError && connection.lastSyncOutcome === 'failed'
              ? html`<br /><span class="muted small">${connection.lastSyncError.slice(0, 300)}</span>`
              : ''
          }`;
  const toggle =
    connection.status === 'disabled'
      ? postButton(`/admin/connections/${connection.id}/enable`, 'Enable', {
          attributes: html`data-action="enable"`,
        })
      : postButton(`/admin/connections/${connection.id}/disable`, 'Disable', {
          attributes: html`data-action="disable"`,
        });
  return html`<tr role="row" data-connection-id="${connection.id}">
    <td role="cell">
      <a href="/admin/connections/${connection.id}"
        ><strong>${connection.displayName ?? connection.email ?? '(unnamed)'}</strong></a
      ><br />
      <span class="muted small"
        >${connection.email ?? ''}<br />${zone ?? 'zone not known yet'}<br /><code
          >${connection.id}</code
        ></span
      >
    </td>
    <td role="cell" data-label="Status">${statusBadge(connection.status)}</td>
    <td role="cell" data-label="Last sync">${lastSync}</td>
    <td role="cell" data-label="Next sync">
      ${connection.status === 'active' ? shownTime(connection.nextSyncAt, zone, now) : html`<span class="muted">—</span>`}
    </td>
    <td role="cell" data-label="Open slots" class="num">${connection.openSlots}</td>
    <td role="cell" data-label="Feeds">
      <ul class="list-plain">
        ${connection.feeds.map((feed) => describeFeedRow(feed, titles, zone, now))}
      </ul>
      ${createFeedForm(connection)}
    </td>
    <td role="cell">
      <div class="actions">
        ${
          connection.status === 'active'
            ? postButton(`/admin/connections/${connection.id}/sync`, 'Sync now', {
                attributes: html`data-action="sync"`,
              })
            : ''
        }
        ${toggle}
      </div>
    </td>
  </tr>`;
}

function filterForm(filter: ConnectionFilter): Raw {
  return html`<form
    method="get"
    action="${ADMIN_HOME}"
    class="filters card"
    id="connection-filter"
    role="search"
  >
    <div class="field">
      <label for="filter-text">Find</label>
      <input
        id="filter-text"
        name="q"
        type="search"
        value="${filter.text ?? ''}"
        placeholder="e-mail, name or id"
      />
    </div>
    <div class="field narrow">
      <label for="filter-status">Status</label>
      <select id="filter-status" name="status">
        <option value="">Any</option>
        ${CONNECTION_STATUSES.map(
          (status) =>
            html`<option value="${status}" ${filter.status === status ? html`selected` : ''}>
              ${STATUS_LABEL[status]}
            </option>`,
        )}
      </select>
    </div>
    <div class="actions">
      <button type="submit" class="button primary">Filter</button>
      ${filter.text || filter.status ? html`<a class="button" href="${ADMIN_HOME}">Clear</a>` : ''}
    </div>
  </form>`;
}

export function adminPage(
  reply: FastifyReply,
  input: {
    connections: ConnectionOverview[];
    total: number;
    notice?: string;
    filter: ConnectionFilter;
    now: Date;
    /** Every ended destination whose events are still being deleted from a calendar. */
    cleanups: CaldavCleanupRecord[];
  },
): FastifyReply {
  const { connections, total, filter } = input;
  const filtered = Boolean(filter.text || filter.status);
  return sendPage(reply, 200, {
    title: 'Admin',
    nav: 'admin',
    body: html`<h1>Connections</h1>
      ${input.notice ? html`<p class="notice" role="status" id="notice">${input.notice}</p>` : ''}
      <p class="muted">
        Accounts connected to this installation. New ones connect at <a href="/connect">/connect</a>.
      </p>
      ${cleanupsSection({ cleanups: input.cleanups, scope: ADMIN_CLEANUP_PATHS, zone: null, now: input.now })}
      ${filterForm(filter)}
      <h2 id="connections-heading">${filtered ? `${total} matching` : `${total} in all`}</h2>
      ${total > connections.length ? html`<p class="muted">Showing the first ${connections.length}.</p>` : ''}
      ${
        connections.length === 0
          ? html`<p class="muted" id="no-connections">
              ${filtered ? 'No connection matches this filter.' : 'No connections yet.'}
            </p>`
          : scrollBox(
              'Connections',
              // On a phone each connection is a block of its own (stack-on-phone in the stylesheet), its
              // actions in sight; the explicit roles keep it a table for screen readers all the same.
              html`<table id="connections" class="stack-on-phone" role="table">
                <thead role="rowgroup">
                  <tr role="row">
                    <th scope="col" role="columnheader">Account</th>
                    <th scope="col" role="columnheader">Status</th>
                    <th scope="col" role="columnheader">Last sync</th>
                    <th scope="col" role="columnheader">Next sync</th>
                    <th scope="col" role="columnheader" class="num">Open slots</th>
                    <th scope="col" role="columnheader">Feeds</th>
                    <th scope="col" role="columnheader">Actions</th>
                  </tr>
                </thead>
                <tbody role="rowgroup">
                  ${connections.map((c) => connectionRow(c, input.now))}
                </tbody>
              </table>`,
            )
      }`,
  });
}

export function newFeedUrlPage(
  reply: FastifyReply,
  input: { feed: FeedRecord; links: FeedLinks; rotated: boolean; loopback: boolean },
): FastifyReply {
  const { feed, links } = input;
  return sendPage(reply, 200, {
    title: input.rotated ? 'Feed URL replaced' : 'Feed created',
    nav: 'admin',
    body: html`<section class="card">
      <h1>${input.rotated ? 'Feed URL replaced' : 'Feed created'}</h1>
      ${input.rotated ? html`<p class="warning">The old URL of this feed stopped working.</p>` : ''}
      <p>
        ${
          feed.teamId === null
            ? 'Hand this URL to the account’s owner; they also find it on their own page (Sign in).'
            : 'Hand this URL to the team; its members also find it on their own page (Sign in).'
        }
      </p>
      <div class="field">
        <label for="new-feed-url">Feed URL</label>
        <div class="copy-field">
          <input id="new-feed-url" type="text" readonly value="${links.https}" data-feed-id="${feed.id}" />
          <button type="button" class="button" data-copy="new-feed-url">Copy</button>
        </div>
      </div>
      <div class="feed-links">
        <a class="button small" href="${links.webcal}">webcal link</a>
        <a class="button small" href="${links.google}" rel="noopener noreferrer">Add to Google Calendar</a>
        <a class="button small" href="${links.outlook}" rel="noopener noreferrer">Add to Outlook.com</a>
        <a class="button small" href="${links.microsoft365}" rel="noopener noreferrer"
          >Add to Microsoft 365</a
        >
      </div>
      ${
        input.loopback
          ? html`<p class="warning small" data-loopback-note>
              PUBLIC_BASE_URL is this machine: calendar apps here can subscribe, but Google Calendar and
              Outlook fetch feeds from their own servers, which cannot reach it.
            </p>`
          : ''
      }
      <p>
        ${
          feed.teamId === null
            ? html`<a href="${ADMIN_HOME}">Back to the connections</a>`
            : html`<a href="/admin/teams">Back to the teams</a>`
        }
      </p>
    </section>`,
  });
}
