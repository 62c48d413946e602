// An endpoint's delivery log, shown under each endpoint on the admin's "API and webhooks" page and on the
// owner's page: per delivery its event, when it was made, its state (queued, retrying, delivered, given up),
// attempts, the last status, latency and error; and, after "Send test event", how the test went.
import type { WebhookDeliveryRecord } from '../store/webhooks.js';
import { WEBHOOK_TEST_EVENT } from '../store/webhook-events.js';
import { attemptAnswer } from '../webhooks/first-attempt.js';
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
      // On a phone each delivery is a block of its own (stack-on-phone in the stylesheet), how it went in
      // sight; in seven columns its state, status and error sat out of sight in a sideways scroll, and its
      // event broke into pieces. The explicit roles keep it a table for screen readers all the same.
      html`<table class="deliveries stack-on-phone" role="table">
        <thead role="rowgroup">
          <tr role="row">
            <th scope="col" role="columnheader">Event</th>
            <th scope="col" role="columnheader">Created</th>
            <th scope="col" role="columnheader">State</th>
            <th scope="col" role="columnheader" class="num">Attempts</th>
            <th scope="col" role="columnheader" class="num">Last status</th>
            <th scope="col" role="columnheader" class="num">Latency</th>
            <th scope="col" role="columnheader">Last error</th>
          </tr>
        </thead>
        <tbody role="rowgroup">
          ${deliveries.map(
            (d) =>
              html`<tr role="row" data-delivery-id="${d.id}">
                <td role="cell" data-label="Event"><code>${d.eventType}</code></td>
                <td role="cell" data-label="Created">${shownTime(d.createdAt, null, now)}</td>
                <td role="cell" data-label="State">${deliveryState(d)}</td>
                <td role="cell" data-label="Attempts" class="num">${d.attempts}</td>
                <td role="cell" data-label="Last status" class="num">${d.lastStatus ?? '—'}</td>
                <td role="cell" data-label="Latency" class="num">
                  ${d.lastLatencyMs === null ? '—' : `${d.lastLatencyMs} ms`}
                </td>
                <td role="cell" data-label="Last error" class="small">${d.lastError ?? ''}</td>
              </tr>`,
          )}
        </tbody>
      </table>`,
    )}
  </details>`;
}

/**
 * What the page says on the endpoint just tested, from its newest test delivery in the log: queued (the worker
 * sends it within a second or so; a reload shows how it went), delivered, or not, with what the receiver
 * answered and whether it is retried.
 */
export function testNotice(
  endpoint: { disabledAt: Date | null },
  deliveries: readonly WebhookDeliveryRecord[],
): Raw {
  const test = deliveries.find((d) => d.eventType === WEBHOOK_TEST_EVENT);
  const say = (kind: 'notice' | 'warning', text: string) =>
    html`<p class="${kind} small" role="status" data-test-outcome>${text}</p>`;
  if (test?.deliveredAt) {
    return say('notice', `Test event delivered: ${attemptAnswer(test)} in ${test.lastLatencyMs ?? '?'} ms.`);
  }
  if (test !== undefined && (test.attempts > 0 || test.givenUpAt !== null)) {
    const next =
      test.givenUpAt !== null
        ? endpoint.disabledAt
          ? 'not retried: the endpoint is disabled.'
          : 'given up.'
        : 'retried with backoff; reload the page to see the next attempt.';
    return say('warning', `Test event not delivered: ${attemptAnswer(test)}; ${next}`);
  }
  return say(
    'notice',
    'Test event queued: its delivery is the newest in the log below. Reload the page to see how it went.' +
      (endpoint.disabledAt
        ? ' The endpoint stays disabled; the test gets one attempt, without retries.'
        : ''),
  );
}
