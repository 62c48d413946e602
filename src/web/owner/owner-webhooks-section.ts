// The owner's webhook endpoints on "Your availability" (/me), each with its latest deliveries and a button that
// sends it a test event, and the page that shows a new one's secret once.
import type { FastifyReply } from 'fastify';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '../../store/webhooks.js';
import { html, sendPage, type Raw } from '../html.js';
import { postButton } from '../post-button.js';
import { deliveryLog, testNotice } from '../webhook-delivery-log.js';

/** The owner's endpoints as the section shows them. */
export interface OwnerWebhooks {
  endpoints: { endpoint: WebhookEndpointRecord; deliveries: WebhookDeliveryRecord[] }[];
  /** The endpoint a test event was just sent to: the section opens on it. */
  tested?: string;
}

/** How many of an endpoint's latest deliveries its owner sees. */
export const OWNER_DELIVERY_LOG_LENGTH = 10;

/** Where "Send test event" leads: the owner's page, opened on the endpoint tested. */
export const testedWebhookLocation = (endpointId: string) => `/me?tested=${endpointId}#webhook-${endpointId}`;

function endpointItem(
  { endpoint, deliveries }: OwnerWebhooks['endpoints'][number],
  tested: boolean,
  now: Date,
): Raw {
  return html`<li id="webhook-${endpoint.id}" data-endpoint-id="${endpoint.id}">
    <code>${endpoint.url}</code>
    <span class="muted small">${endpoint.events.join(', ')}</span>
    ${endpoint.disabledAt ? html`<p class="error small">Disabled: ${endpoint.disabledReason ?? ''}</p>` : ''}
    ${tested ? testNotice(endpoint, deliveries) : ''}
    ${deliveryLog(endpoint.url, deliveries, now, { open: tested })}
    <div class="actions">
      ${postButton(`/me/webhooks/${endpoint.id}/test`, 'Send test event')}
      ${postButton(`/me/webhooks/${endpoint.id}/delete`, 'Delete', {
        confirm: 'Delete this webhook endpoint? Nothing more is sent to it.',
      })}
    </div>
  </li>`;
}

/**
 * For developers: endpoints that hear of changes to this account, signed; the secret is shown once. Folded
 * away unless a test was just sent.
 */
export function webhooksSection(input: { webhooks: OwnerWebhooks; now: Date }): Raw {
  const { endpoints, tested } = input.webhooks;
  const opened = endpoints.some((item) => item.endpoint.id === tested);
  return html`<details class="card" id="webhooks" ${opened ? 'open' : ''}>
    <summary>Webhooks (for developers)</summary>
    <p class="muted small">
      slotfeed POSTs a signed JSON message (Standard Webhooks) to each address below when your availability
      changes, a booking is seen, or the account needs connecting again.
    </p>
    ${
      endpoints.length === 0
        ? html`<p class="muted small">No webhook endpoints.</p>`
        : html`<ul class="list-plain">
            ${endpoints.map((item) => endpointItem(item, item.endpoint.id === tested, input.now))}
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
