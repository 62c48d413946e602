// Small server-rendered pages: every interpolated value goes through `escapeHtml`, pages load no external
// assets, and a strict Content-Security-Policy allows only same-origin requests and the page's own inline
// script (by nonce), so an escaping slip cannot pull in or run anything else.
import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { assetUrl } from './assets.js';

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch] ?? ch);
}

/** A tagged template whose interpolations are escaped unless they are `Raw` (already-built HTML). */
export class Raw {
  constructor(readonly html: string) {}
  toString(): string {
    return this.html;
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Raw {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += renderValue(value) + (strings[i + 1] ?? '');
  });
  return new Raw(out);
}

function renderValue(value: unknown): string {
  if (value instanceof Raw) return value.html;
  if (Array.isArray(value)) return value.map(renderValue).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(value);
}

/** Which links the header offers: a visitor's, a signed-in owner's, or the administrator's. */
export type PageNav = 'public' | 'owner' | 'admin';

export interface PageOptions {
  title: string;
  body: Raw;
  /** Set when the page carries an inline script; the same nonce goes into the CSP header. */
  scriptNonce?: string;
  /** The header's links (default: a visitor's). */
  nav?: PageNav;
}

function navLinks(nav: PageNav): Raw {
  switch (nav) {
    case 'admin':
      return html`<a href="/admin">Connections</a> <a href="/admin/teams">Teams</a>
        <a href="/admin/api">API</a>
        <a href="/admin/reports">Reports</a>
        <a href="/admin/queues">Queues</a>
        <form method="post" action="/admin/logout">
          <button type="submit" class="button small">Sign out</button>
        </form>`;
    case 'owner':
      return html`<a href="/me">Your availability</a>
        <form method="post" action="/signout">
          <button type="submit" class="button small">Sign out</button>
        </form>`;
    case 'public':
      return html`<a href="/connect">Connect</a> <a href="/signin">Sign in</a>`;
  }
}

export function renderPage(options: PageOptions): string {
  const nonce = options.scriptNonce === undefined ? html`` : html` nonce="${options.scriptNonce}"`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><meta name="color-scheme" content="light dark">
<title>${escapeHtml(options.title)} · slotfeed</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="${assetUrl('slotfeed.css')}">
<script src="${assetUrl('slotfeed.js')}" defer${nonce.html}></script></head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header"><div class="inner">
<a class="brand" href="/"><span class="brand-mark" aria-hidden="true"></span>slotfeed</a>
<nav class="site-nav" aria-label="Site">${navLinks(options.nav ?? 'public').html}</nav>
</div></header>
<main id="main">
${options.body.html}
</main>
<footer class="site-footer"><div class="inner">slotfeed publishes free time from Calendbook as calendar feeds.</div></footer>
</body></html>
`;
}

export function newScriptNonce(): string {
  return randomBytes(16).toString('base64');
}

function contentSecurityPolicy(scriptNonce: string | undefined): string {
  return [
    "default-src 'none'",
    // FullCalendar injects its styles as <style> elements at run time.
    "style-src 'self' 'unsafe-inline'",
    // Our own and vendored scripts from /assets (an allowlist, assets.ts), and a page's inline one by nonce.
    scriptNonce ? `script-src 'self' 'nonce-${scriptNonce}'` : "script-src 'self'",
    "img-src 'self' data:",
    // FullCalendar's toolbar icons are a font in a data: URL.
    "font-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * Sends a page with the headers every slotfeed page carries: no caching, no framing, and no Referer to other
 * sites (a callback URL holds an authorization code). Not `no-referrer`: Chromium then sends `Origin: null`
 * on form posts, which the admin's same-origin check must reject.
 */
export function sendPage(reply: FastifyReply, status: number, options: PageOptions): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .headers(pageSecurityHeaders(contentSecurityPolicy(options.scriptNonce)))
    .send(renderPage(options));
}

/** What every page of ours carries besides its CSP (Bull Board's pages get the same, queue-dashboard.ts). */
export function pageSecurityHeaders(csp: string): Record<string, string> {
  return {
    'cache-control': 'no-store',
    'content-security-policy': csp,
    'referrer-policy': 'same-origin',
    'x-content-type-options': 'nosniff',
  };
}

/**
 * A box for a table or chart that may be wider than a phone: it scrolls sideways inside itself, so the page
 * never does. Focusable and labelled, so keyboard users can scroll it too.
 */
export function scrollBox(label: string, content: Raw): Raw {
  return html`<div class="table-scroll" role="region" aria-label="${label}" tabindex="0">${content}</div>`;
}
