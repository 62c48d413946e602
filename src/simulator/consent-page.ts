// HTML of the simulated login/consent screen and of the authorization error page. Both are read on phones
// too (the connect flow sends an owner here): a viewport meta tag, so a phone lays them out at its own width,
// and a few lines of style so each account's row wraps rather than runs off the side.
import type { SimUser } from './types.js';

// No icon of its own: an empty one, so the browser does not ask for /favicon.ico and log its 404 on every visit.
const HEAD = `<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<style>
body { font: 16px/1.5 system-ui, sans-serif; margin: 0 auto; padding: 1rem; max-width: 40rem; overflow-wrap: anywhere; }
ul { list-style: none; padding: 0; }
li + li { margin-top: 0.5rem; border-top: 1px solid #d3d9e0; padding-top: 0.5rem; }
.note { color: #1a5e20; font-weight: 600; }
button { font: inherit; min-height: 2.5rem; padding: 0.3rem 0.9rem; margin-left: 0.25rem; }
</style>`;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

export interface ConsentFields {
  client_id: string;
  redirect_uri: string;
  response_type: string;
  scope: string;
  state?: string;
  code_challenge?: string;
  code_challenge_method?: string;
}

function hiddenInputs(fields: ConsentFields, extra: Record<string, string>): string {
  return Object.entries({ ...fields, ...extra })
    .filter((entry): entry is [string, string] => typeof entry[1] === 'string')
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
}

export function consentPageHtml(
  fields: ConsentFields,
  users: readonly SimUser[],
  approveAction: string,
  noteFor: (user: SimUser, index: number) => string | undefined = () => undefined,
): string {
  const rows = users
    .map((u, i) => {
      const note = noteFor(u, i);
      return `<li><form method="post" action="${escapeHtml(approveAction)}">${hiddenInputs(fields, {
        user_id: u.id,
        decision: 'approve',
      })}<strong>${escapeHtml(u.profile.name)}</strong>${
        note === undefined ? '' : ` <span class="note">(${escapeHtml(note)})</span>`
      } &lt;${escapeHtml(u.profile.email)}&gt; (${escapeHtml(
        u.profile.timezone,
      )}) <button type="submit" name="approve" data-user-id="${escapeHtml(u.id)}">Approve</button></form></li>`;
    })
    .join('\n');
  const deny = `<form method="post" action="${escapeHtml(approveAction)}">${hiddenInputs(fields, {
    decision: 'deny',
  })}<button type="submit" name="deny">Deny</button></form>`;
  return `<!doctype html>
<html lang="en"><head>${HEAD}<title>Calendbook · Sign in</title></head>
<body><main>
<h1>Calendbook (simulated)</h1>
<p>${escapeHtml(fields.client_id)} asks for access: <code>${escapeHtml(fields.scope)}</code>. Sign in as:</p>
<ul>
${rows}
</ul>
${deny}
</main></body></html>`;
}

export function errorPageHtml(description: string): string {
  return `<!doctype html>
<html lang="en"><head>${HEAD}<title>Calendbook · Error</title></head>
<body><main><h1>Authorization error</h1><p>invalid_request: ${escapeHtml(description)}</p></main></body></html>`;
}
