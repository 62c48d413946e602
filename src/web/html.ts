// Small server-rendered pages: every interpolated value goes through `escapeHtml`, pages load no external
// assets, and a strict Content-Security-Policy allows only same-origin requests and the page's own inline
// script (by nonce), so an escaping slip cannot pull in or run anything else.
import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';

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

const STYLE = `body{font:15px/1.45 system-ui,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem;color:#1d2327}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem}table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #ddd;padding:.35rem .5rem;text-align:left;vertical-align:top}
code,input[readonly]{font-family:ui-monospace,monospace;font-size:.85rem}input[readonly]{width:36rem;max-width:100%}
form.inline{display:inline}.muted{color:#666}.error{color:#a00}.ok{color:#070}
.links li{margin:.4rem 0}button{cursor:pointer}`;

export interface PageOptions {
  title: string;
  body: Raw;
  /** Set when the page carries an inline script; the same nonce goes into the CSP header. */
  scriptNonce?: string;
}

export function renderPage(options: PageOptions): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(options.title)} · slotfeed</title>
<style>${STYLE}</style></head>
<body>
${options.body.html}
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
