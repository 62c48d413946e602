// An endpoint's delivery log, as the admin's "API and webhooks" page shows it under each endpoint: per delivery
// its event, when it was made, its state (queued, retrying, delivered, given up), attempts, the last status,
// latency and error.
import type { WebhookDeliveryRecord } from '../store/webhooks.js';
import { html, scrollBox, type Raw } from './html.js';
import { shownTime } from './time-html.js';

function deliveryState(d: WebhookDeliveryRecord): Raw {
  if (d.deliveredAt) return html`<span class="badge ok">delivered</span>`;
  if (d.givenUpAt) return html`<span class="badge error">given up</span>`;
  if (d.attempts > 0) return html`<span class="badge warn">retrying</span>`;
  return html`<span class="badge">queued</span>`;
}

/** An endpoint's latest deliveries (newest first): what each is, when it was made, how its attempts went. */
export function deliveryLog(url: string, deliveries: readonly WebhookDeliveryRecord[], now: Date): Raw {
  if (deliveries.length === 0) return html`<p class="muted small">No deliveries yet.</p>`;
  return html`<details>
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
