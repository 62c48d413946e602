// The page a freshly connected account lands on: its feed links in every form calendar apps take, copy
// buttons, and a preview of the free time ahead that fills in once the first sync has landed.
import type { FastifyReply } from 'fastify';
import { feedCalendarName } from '../feeds/describe-feed.js';
import type { Connection } from '../generated/prisma/client.js';
import { feedLinksFor } from './feed-links.js';
import { html, newScriptNonce, Raw, sendPage } from './html.js';

function copyField(id: string, label: string, value: string): Raw {
  return html`<p>
    <label for="${id}">${label}</label><br />
    <input id="${id}" type="text" readonly value="${value}" />
    <button type="button" data-copy="${id}">Copy</button>
  </p>`;
}

// Plain DOM (textContent only) so nothing from the JSON is ever parsed as HTML. Polling stops after about
// two minutes: a first sync that takes longer is shown on the next visit of the admin page anyway.
const PAGE_SCRIPT = `
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.addEventListener('click', async () => {
    const input = document.getElementById(button.dataset.copy);
    try { await navigator.clipboard.writeText(input.value); }
    catch { input.select(); document.execCommand('copy'); }
    button.textContent = 'Copied';
  });
}
const preview = document.getElementById('preview');
if (preview) {
  const status = document.getElementById('preview-status');
  const list = document.getElementById('preview-slots');
  let attempts = 0;
  const poll = async () => {
    attempts += 1;
    try {
      const response = await fetch(preview.dataset.url, { headers: { accept: 'application/json' } });
      const data = await response.json();
      if (response.ok && data.ready) {
        list.replaceChildren();
        const zone = { timeZone: data.timezone };
        for (const event of data.events) {
          const item = document.createElement('li');
          const day = new Date(event.start).toLocaleDateString(undefined,
            { ...zone, weekday: 'short', day: 'numeric', month: 'short' });
          const time = (iso) => new Date(iso).toLocaleTimeString(undefined,
            { ...zone, hour: '2-digit', minute: '2-digit' });
          item.textContent = day + ', ' + time(event.start) + '–' + time(event.end) + ' · ' + event.title;
          list.append(item);
        }
        const what = data.view === 'free' ? 'free time' : 'free slots';
        status.textContent = data.events.length === 0
          ? 'The first sync has landed: no ' + what + ' in the coming weeks.'
          : 'Next ' + what + ' (' + data.timezone + '):';
        preview.dataset.ready = 'true';
        return;
      }
    } catch {}
    if (attempts < 60) setTimeout(poll, 2000);
    else status.textContent = 'The first sync has not landed yet; the feed fills in as soon as it does.';
  };
  poll();
}
`;

export interface ConnectedPageInput {
  connection: Connection;
  /** The new default feed's token; null when the account already had a feed (its token cannot be shown). */
  token: string | null;
  publicBaseUrl: string;
}

export function connectedPage(reply: FastifyReply, input: ConnectedPageInput): FastifyReply {
  const { connection, token } = input;
  const who = connection.displayName ?? connection.email ?? 'your Calendbook account';
  if (token === null) {
    return sendPage(reply, 200, {
      title: 'Reconnected',
      body: html`<h1>Reconnected: ${who}</h1>
        <p class="ok" id="reconnected">
          Access was renewed. This account was connected before, so its existing feed URLs keep working:
          calendars subscribed to them need no change.
        </p>
        <p class="muted">A fresh sync has been queued.</p>`,
    });
  }
  const name = feedCalendarName({ displayName: connection.displayName, email: connection.email });
  const links = feedLinksFor(input.publicBaseUrl, token, name);
  const previewUrl = `/feeds/${encodeURIComponent(token)}/preview.json`;
  const nonce = newScriptNonce();
  return sendPage(reply, 200, {
    title: 'Connected',
    scriptNonce: nonce,
    body: html`<h1>Connected: ${who}</h1>
      <p>Your free time is now a calendar feed. Subscribe to it in your calendar app:</p>
      <ul class="links">
        <li><a id="link-webcal" href="${links.webcal}">Subscribe (webcal)</a></li>
        <li>
          <a id="link-google" href="${links.google}" target="_blank" rel="noopener noreferrer"
            >Add to Google Calendar</a
          >
        </li>
        <li>
          <a id="link-outlook" href="${links.outlook}" target="_blank" rel="noopener noreferrer"
            >Add to Outlook.com</a
          >
        </li>
        <li><a id="link-https" href="${links.https}">Download the .ics feed</a></li>
      </ul>
      ${copyField('feed-https', 'Feed URL', links.https)}
      ${copyField('feed-webcal', 'webcal URL', links.webcal)}
      <p class="muted">
        Keep these URLs private: anyone who has one can see your free time. This page shows them once; an
        administrator can replace (rotate) them later.
      </p>
      <h2>Preview</h2>
      <section id="preview" data-url="${previewUrl}">
        <p id="preview-status">Waiting for the first sync…</p>
        <ul id="preview-slots"></ul>
      </section>
      <script nonce="${nonce}">
        ${new Raw(PAGE_SCRIPT)};
      </script>`,
  });
}
