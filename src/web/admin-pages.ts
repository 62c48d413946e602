// HTML of the admin pages: sign-in, the connections overview with its actions, and the page that shows a
// new feed URL once (after create or rotate).
import { viewOf } from '../feeds/feed-options.js';
import type { FastifyReply } from 'fastify';
import type { FeedRecord } from '../store/feeds.js';
import type { ConnectionOverview } from '../store/connection-admin.js';
import type { FeedLinks } from './feed-links.js';
import { html, sendPage, type Raw } from './html.js';

export const ADMIN_NOTICES: Record<string, string> = {
  'sync-queued': 'Sync queued; it runs as soon as a worker is free.',
  disabled: 'Connection disabled: it is no longer synced, and its feeds keep serving the last snapshot.',
  enabled: 'Connection enabled; a sync is queued.',
  'enabled-sync-later':
    'Connection enabled. Its sync could not be queued (Redis does not answer); the scheduler queues it once Redis is back.',
  revoked: 'Feed revoked: its URL now answers 404.',
  'already-disabled': 'Nothing changed: the connection was already disabled.',
  'already-enabled': 'Nothing changed: the connection was not disabled.',
};

function when(date: Date | null): string {
  return date === null ? '—' : `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function postButton(action: string, label: string, attributes: Raw = html``): Raw {
  return html`<form class="inline" method="post" action="${action}">
    <button type="submit" ${attributes}>${label}</button>
  </form>`;
}

export function loginPage(
  reply: FastifyReply,
  status: number,
  options: { error?: string; next?: string } = {},
): FastifyReply {
  return sendPage(reply, status, {
    title: 'Admin sign-in',
    body: html`<h1>slotfeed admin</h1>
      ${options.error ? html`<p class="error" id="login-error">${options.error}</p>` : ''}
      <form method="post" action="/admin/login">
        <p>
          <label for="token">Admin token</label><br />
          <input id="token" name="token" type="password" autocomplete="current-password" required autofocus />
        </p>
        <input type="hidden" name="next" value="${options.next ?? '/'}" />
        <p><button type="submit">Sign in</button></p>
      </form>`,
  });
}

function describeFeedRow(feed: FeedRecord, eventTitles: Map<string, string>): Raw {
  const scope =
    feed.upstreamEventId === null
      ? 'all event types'
      : (eventTitles.get(feed.upstreamEventId) ?? feed.upstreamEventId);
  const options = [
    viewOf(feed.options) === 'free' ? 'free time' : 'slots',
    feed.options.days === undefined ? 'default days' : `${feed.options.days} days`,
    feed.options.merge ? 'merged' : null,
    feed.options.summary === undefined ? null : `“${feed.options.summary}”`,
  ].filter((o) => o !== null);
  return html`<li data-feed-id="${feed.id}">
    ${feed.label ?? 'feed'}
    <span class="muted">(${scope}; ${options.join(', ')}; since ${when(feed.createdAt)})</span>
    ${postButton(`/admin/feeds/${feed.id}/rotate`, 'Rotate URL', html`data-action="rotate" data-feed-id="${feed.id}"`)}
    ${postButton(`/admin/feeds/${feed.id}/revoke`, 'Revoke', html`data-action="revoke" data-feed-id="${feed.id}"`)}
  </li>`;
}

function createFeedForm(connection: ConnectionOverview): Raw {
  return html`<details>
    <summary>New feed</summary>
    <form method="post" action="/admin/connections/${connection.id}/feeds">
      <p>
        <label
          >Event type
          <select name="upstreamEventId">
            <option value="">All event types</option>
            ${connection.eventTypes.map((e) => html`<option value="${e.id}">${e.title}${e.enabled ? '' : ' (disabled)'}</option>`)}
          </select></label
        >
      </p>
      <p>
        <label
          >Shows
          <select name="view">
            <option value="free" selected>Free time (blocks)</option>
            <option value="slots">Bookable slots</option>
          </select></label
        >
      </p>
      <p>
        <label>Label <input name="label" maxlength="100" /></label>
      </p>
      <p>
        <label>Days ahead <input name="days" type="number" min="1" max="366" placeholder="default" /></label>
      </p>
      <p>
        <label>Block title, free time only <input name="summary" maxlength="100" placeholder="Free" /></label>
      </p>
      <p>
        <label><input name="merge" type="checkbox" value="true" /> Merge adjacent slots, slots only</label>
      </p>
      <p><button type="submit">Create feed</button></p>
    </form>
  </details>`;
}

function connectionRow(connection: ConnectionOverview): Raw {
  const titles = new Map(connection.eventTypes.map((e) => [e.id, e.title]));
  const lastSync =
    connection.lastSyncOutcome === null
      ? html`never`
      : html`<span class="${connection.lastSyncOutcome === 'succeeded' ? 'ok' : 'error'}"
            >${connection.lastSyncOutcome}</span
          >
          ${when(connection.lastSyncAt)}${
            connection.lastSyncError && connection.lastSyncOutcome === 'failed'
              ? html`<br /><span class="muted">${connection.lastSyncError.slice(0, 300)}</span>`
              : ''
          }`;
  const toggle =
    connection.status === 'disabled'
      ? postButton(`/admin/connections/${connection.id}/enable`, 'Enable', html`data-action="enable"`)
      : postButton(`/admin/connections/${connection.id}/disable`, 'Disable', html`data-action="disable"`);
  return html`<tr data-connection-id="${connection.id}">
    <td>
      <strong>${connection.displayName ?? connection.email ?? '(unnamed)'}</strong><br />
      <span class="muted">${connection.email ?? ''} ${connection.timezone ?? ''}<br />${connection.id}</span>
    </td>
    <td class="${connection.status === 'active' ? 'ok' : 'error'}">${connection.status}</td>
    <td>${lastSync}</td>
    <td>${connection.status === 'active' ? when(connection.nextSyncAt) : '—'}</td>
    <td>${connection.openSlots}</td>
    <td>
      <ul>
        ${connection.feeds.map((feed) => describeFeedRow(feed, titles))}
      </ul>
      ${createFeedForm(connection)}
    </td>
    <td>
      ${
        connection.status === 'active'
          ? postButton(`/admin/connections/${connection.id}/sync`, 'Sync now', html`data-action="sync"`)
          : ''
      }
      ${toggle}
    </td>
  </tr>`;
}

export function adminPage(
  reply: FastifyReply,
  input: { connections: ConnectionOverview[]; total: number; notice?: string },
): FastifyReply {
  const { connections, total } = input;
  return sendPage(reply, 200, {
    title: 'Admin',
    body: html`<h1>slotfeed admin</h1>
      <p>
        <a href="/admin/queues">Queue dashboard</a> · <a href="/admin/reports">Reports</a> ·
        <a href="/connect">Connect an account</a> · ${postButton('/admin/logout', 'Sign out')}
      </p>
      ${input.notice ? html`<p class="ok" id="notice">${input.notice}</p>` : ''}
      <h2>Connections (${total})</h2>
      ${total > connections.length ? html`<p class="muted">Showing the first ${connections.length}.</p>` : ''}
      <table>
        <thead>
          <tr>
            <th>Account</th>
            <th>Status</th>
            <th>Last sync</th>
            <th>Next sync</th>
            <th>Open slots</th>
            <th>Feeds</th>
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
          ${connections.map(connectionRow)}
        </tbody>
      </table>`,
  });
}

export function newFeedUrlPage(
  reply: FastifyReply,
  input: { feed: FeedRecord; links: FeedLinks; rotated: boolean },
): FastifyReply {
  const { feed, links } = input;
  return sendPage(reply, 200, {
    title: input.rotated ? 'Feed URL replaced' : 'Feed created',
    body: html`<h1>${input.rotated ? 'Feed URL replaced' : 'Feed created'}</h1>
      ${input.rotated ? html`<p class="error">The old URL of this feed stopped working.</p>` : ''}
      <p>Copy the new URL now: it is shown only once (only its hash is stored).</p>
      <p>
        <label for="new-feed-url">Feed URL</label><br />
        <input id="new-feed-url" type="text" readonly value="${links.https}" data-feed-id="${feed.id}" />
      </p>
      <ul class="links">
        <li><a href="${links.webcal}">webcal link</a></li>
        <li><a href="${links.google}" rel="noopener noreferrer">Add to Google Calendar</a></li>
        <li><a href="${links.outlook}" rel="noopener noreferrer">Add to Outlook.com</a></li>
      </ul>
      <p><a href="/">Back to the admin page</a></p>`,
  });
}
