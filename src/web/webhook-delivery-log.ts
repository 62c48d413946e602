// An endpoint's delivery log, shown under each endpoint on the admin's "API and webhooks" page and on the
// owner's page: per delivery its event, when it was made, its state (queued, retrying, delivered, given up),
// attempts, the last status, latency and error; and, after "Send test event", the word that the test is queued.
import type { WebhookDeliveryRecord } from '../store/webhooks.js';
import { html, scrollBox, type Raw } from './html.js';
import { shownTime } from './time-html.js';

function deliveryState(d: WebhookDeliveryRecord): Raw {
  if (d.deliveredAt) return html`<span class="badge ok">delivered</span>`;
  if (d.givenUpAt) return html`<span class="badge error">given up</span>`;
  if (d.attempts > 0) return html`<span class="badge warn">retrying</span>`;
  return html`<span class="badge">queued</span>`;
}

/**
 * An endpoint's latest deliveries (newest first): what each is, when it was made, how its attempts went.
 * Folded away unless `open`.
 */
export function deliveryLog(
  url: string,
  deliveries: readonly WebhookDeliveryRecord[],
  now: Date,
  options: { open?: boolean } = {},
): Raw {
  if (deliveries.length === 0) return html`<p class="muted small">No deliveries yet.</p>`;
  return html`<details ${options.open ? 'open' : ''}>
    <summary>Latest deliveries (${deliveries.length})</summary>
    ${scrollBox(
      `Deliveries to ${url}`,
      html`<table class="deliveries">
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Created</th>
            <th scope="col">State</th>
            <th scope="col" class="num">Attempts</th>
            <th scope="col" class="num">Last status</th>
            <th scope="col" class="num">Latency</th>
            <th scope="col">Last error</th>
          </tr>
        </thead>
        <tbody>
          ${deliveries.map(
            (d) =>
              html`<tr data-delivery-id="${d.id}">
                <td><code>${d.eventType}</code></td>
                <td>${shownTime(d.createdAt, null, now)}</td>
                <td>${deliveryState(d)}</td>
                <td class="num">${d.attempts}</td>
                <td class="num">${d.lastStatus ?? '—'}</td>
                <td class="num">${d.lastLatencyMs === null ? '—' : `${d.lastLatencyMs} ms`}</td>
                <td class="small">${d.lastError ?? ''}</td>
              </tr>`,
          )}
        </tbody>
      </table>`,
    )}
  </details>`;
}

/**
 * What the page says on the endpoint just tested. The delivery is queued, not sent yet: the worker sends it
 * within a second or so, and the log says how it went once the page is loaded again.
 */
export function testQueuedNotice(endpoint: { disabledAt: Date | null }): Raw {
  return html`<p class="notice small" role="status" data-test-queued>
    Test event queued: its delivery is the newest in the log below. Reload the page to see how it went.
    ${endpoint.disabledAt ? 'The endpoint stays disabled; the test gets one attempt, without retries.' : ''}
  </p>`;
}
