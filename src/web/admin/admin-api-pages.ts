// HTML of the admin's "API and webhooks" page (/admin/api): API keys with their scopes, webhook endpoints with
// their state (a disabled one says why, with a button to enable it again), their latest deliveries and a
// button that sends a test event, and the forms that make them. A new key or signing secret is shown once, on
// the page that follows its creation.
import type { FastifyReply } from 'fastify';
import type { ApiKeyRecord } from '../../store/api-keys.js';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '../../store/webhooks.js';
import { WEBHOOK_EVENT_TYPES } from '../../store/webhook-events.js';
import { html, sendPage, type Raw } from '../html.js';
import { shownTime } from '../time-html.js';
import { postButton } from '../post-button.js';
import { deliveryLog, testNotice } from '../webhook-delivery-log.js';

export const ADMIN_API = '/admin/api';

export const API_NOTICES: Record<string, string> = {
  'key-revoked': 'API key revoked: requests with it now get 401.',
  'endpoint-deleted': 'Webhook endpoint deleted, with its delivery log.',
  'endpoint-enabled': 'Webhook endpoint enabled again: new events are delivered to it.',
};

export interface AdminEndpoint {
  endpoint: WebhookEndpointRecord;
  /** The connection's or team's name, as the administrator knows it. */
  ownerName: string;
  deliveries: WebhookDeliveryRecord[];
}

/** Where "Send test event" leads: the page, opened on the endpoint tested. */
export const testedLocation = (endpointId: string) =>
  `${ADMIN_API}?tested=${endpointId}#endpoint-${endpointId}`;

function endpointCard(item: AdminEndpoint, now: Date, tested: boolean): Raw {
  const { endpoint } = item;
  const state = endpoint.disabledAt
    ? html`<p class="error alert" role="alert" data-disabled-notice>
        Disabled ${shownTime(endpoint.disabledAt, null, now)}: ${endpoint.disabledReason ?? ''}
      </p>`
    : endpoint.failingSince
      ? html`<p class="warning small">
          Failing since ${shownTime(endpoint.failingSince, null, now)}; retried with backoff.
        </p>`
      : '';
  return html`<li class="card" id="endpoint-${endpoint.id}" data-endpoint-id="${endpoint.id}">
    <p><strong>${item.ownerName}</strong> → <code>${endpoint.url}</code></p>
    <p class="muted small">
      ${endpoint.events.join(', ')}; since ${shownTime(endpoint.createdAt, null, now)}
    </p>
    ${state} ${tested ? testNotice(endpoint, item.deliveries) : ''}
    ${deliveryLog(endpoint.url, item.deliveries, now, { open: tested })}
    <div class="actions">
      ${endpoint.disabledAt ? postButton(`${ADMIN_API}/webhooks/${endpoint.id}/enable`, 'Enable again') : ''}
      ${postButton(`${ADMIN_API}/webhooks/${endpoint.id}/test`, 'Send test event')}
      ${postButton(`${ADMIN_API}/webhooks/${endpoint.id}/delete`, 'Delete', {
        confirm:
          'Delete this webhook endpoint? Nothing more is sent to it, and its delivery log goes with it.',
        danger: true,
      })}
    </div>
  </li>`;
}

/**
 * One key as a card rather than a table row: on a phone a five-column table squeezed its id into pieces of a
 * few characters, or pushed its Revoke button out of sight into a box scrolled sideways.
 */
function keyCard(key: ApiKeyRecord, scope: string, now: Date): Raw {
  return html`<li class="card" data-key-id="${key.id}">
    <p><strong>${key.label}</strong></p>
    <dl class="facts small">
      <dt>Key id</dt>
      <dd><code>${key.id}</code></dd>
      <dt>May read</dt>
      <dd>${scope}</dd>
      <dt>Created</dt>
      <dd>${shownTime(key.createdAt, null, now)}</dd>
      <dt>Last used</dt>
      <dd>
        ${key.lastUsedAt ? shownTime(key.lastUsedAt, null, now) : html`<span class="muted">never</span>`}
      </dd>
    </dl>
    <div class="actions">
      ${postButton(`${ADMIN_API}/keys/${key.id}/revoke`, 'Revoke', {
        confirm: `Revoke the key “${key.label}”? Programs using it get 401 from now on.`,
        danger: true,
      })}
    </div>
  </li>`;
}

export function adminApiPage(
  reply: FastifyReply,
  input: {
    keys: { key: ApiKeyRecord; scope: string }[];
    endpoints: AdminEndpoint[];
    teams: { id: string; name: string }[];
    notice?: string;
    /** The endpoint a test event was just sent to. */
    tested?: string;
    now: Date;
  },
): FastifyReply {
  const { now } = input;
  return sendPage(reply, 200, {
    title: 'API and webhooks',
    nav: 'admin',
    body: html`<h1>API and webhooks</h1>
      ${input.notice ? html`<p class="notice" role="status" id="notice">${input.notice}</p>` : ''}
      <p class="muted">
        Programs read availability from the JSON API (<a href="/api/docs/">reference</a>,
        <a href="/api/openapi.json">OpenAPI document</a>) and hear of changes through webhooks.
      </p>
      <h2>API keys</h2>
      ${
        input.keys.length === 0
          ? html`<p class="muted" id="no-keys">No API keys.</p>`
          : html`<ul class="list-plain" id="api-keys">
              ${input.keys.map((k) => keyCard(k.key, k.scope, now))}
            </ul>`
      }
      <details class="card" id="new-key">
        <summary>New API key</summary>
        <form method="post" action="${ADMIN_API}/keys">
          <div class="field">
            <label for="key-label">Label (who uses it, for what)</label>
            <input id="key-label" name="label" required maxlength="100" />
          </div>
          <div class="field">
            <label for="key-connections"
              >Connections it may read (e-mail addresses or ids, one per line)</label
            >
            <textarea id="key-connections" name="connections" rows="3"></textarea>
          </div>
          <fieldset class="field">
            <legend>Teams it may read</legend>
            ${
              input.teams.length === 0
                ? html`<p class="muted small">No teams yet.</p>`
                : input.teams.map(
                    (t) =>
                      html`<div class="check">
                        <input type="checkbox" id="key-team-${t.id}" name="teams" value="${t.id}" />
                        <label for="key-team-${t.id}">${t.name}</label>
                      </div>`,
                  )
            }
          </fieldset>
          <button type="submit" class="button primary">Create key</button>
        </form>
      </details>
      <h2>Webhook endpoints</h2>
      ${
        input.endpoints.length === 0
          ? html`<p class="muted" id="no-endpoints">No webhook endpoints.</p>`
          : html`<ul class="list-plain" id="endpoints">
              ${input.endpoints.map((e) => endpointCard(e, now, e.endpoint.id === input.tested))}
            </ul>`
      }
      <details class="card" id="new-endpoint">
        <summary>New webhook endpoint</summary>
        <form method="post" action="${ADMIN_API}/webhooks">
          <div class="field">
            <label for="endpoint-owner">For (a connection’s e-mail address or id, or a team’s name)</label>
            <input id="endpoint-owner" name="owner" required maxlength="320" />
          </div>
          <div class="field">
            <label for="endpoint-url">URL</label>
            <input
              id="endpoint-url"
              name="url"
              type="url"
              required
              maxlength="2000"
              placeholder="https://example.com/hooks/slotfeed"
            />
          </div>
          <fieldset class="field">
            <legend>Events</legend>
            ${WEBHOOK_EVENT_TYPES.map(
              (type) =>
                html`<div class="check">
                  <input type="checkbox" id="event-${type}" name="events" value="${type}" checked />
                  <label for="event-${type}"><code>${type}</code></label>
                </div>`,
            )}
          </fieldset>
          <button type="submit" class="button primary">Add endpoint</button>
        </form>
      </details>`,
  });
}

/** The page after creating a key or an endpoint: the secret, once. */
export function secretShownOncePage(
  reply: FastifyReply,
  input: { title: string; label: string; secret: string; explanation: Raw; back: string },
): FastifyReply {
  return sendPage(reply, 200, {
    title: input.title,
    nav: 'admin',
    body: html`<section class="card">
      <h1>${input.title}</h1>
      <p class="warning">
        Shown only now: slotfeed keeps ${input.label === 'API key' ? 'only its hash' : 'it sealed'} and cannot
        show it again.
      </p>
      <div class="field">
        <label for="new-secret">${input.label}</label>
        <div class="copy-field">
          <input id="new-secret" type="text" readonly value="${input.secret}" />
          <button type="button" class="button" data-copy="new-secret">Copy</button>
        </div>
      </div>
      ${input.explanation}
      <p><a href="${input.back}">Back to API and webhooks</a></p>
    </section>`,
  });
}
