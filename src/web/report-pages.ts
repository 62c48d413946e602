// HTML of the admin's report pages: the filters (the CLI's flags as a GET form), a chart where one would rather
// look than read (uPlot, served from node_modules by report-routes.ts; the heat map is a table of coloured
// cells), the report's rows and a CSV link. Chart data travels as inert JSON and is drawn by one inline
// script carrying the page's nonce.
import type { FastifyReply } from 'fastify';
import { formatValue } from '../reports/report-format.js';
import {
  BOOKINGS_GROUPINGS,
  REPORT_NAMES,
  type RawReportQuery,
  type ReportName,
} from '../reports/report-query.js';
import type { ReportResult } from '../reports/report-result.js';
import { WEEKDAY_NAMES } from '../reports/bookings-report.js';
import { html, newScriptNonce, Raw, renderPage, type PageOptions } from './html.js';

export const REPORT_DESCRIPTIONS: Record<ReportName, string> = {
  availability: 'Free slots and free minutes per event type and day, now or as of a past instant.',
  bookings:
    'Bookings inferred from the slots each sync saw taken: durations, lead times, busiest weekdays and hours.',
  utilization: 'For past days, the share of the time offered for booking that was booked.',
  'sync-health': 'Runs, success rate, durations, upstream calls, last error, re-authorisation needed.',
};

/** A line chart: x = every day of the range (UTC midnight, seconds), y = one value per day (0 without data). */
export interface LineChart {
  kind: 'line';
  title: string;
  yLabel: string;
  x: number[];
  y: number[];
}

export interface HeatMap {
  kind: 'heatmap';
  /** bookings[weekday 1..7][hour 0..23]. */
  cells: { weekday: number; hour: number; bookings: number }[];
}

export interface ReportPageInput {
  name: ReportName;
  raw: RawReportQuery;
  connections: { id: string; label: string }[];
  result?: ReportResult;
  chart?: LineChart | HeatMap;
  error?: string;
  csvHref?: string;
}

// The page's own policy: sendPage's, plus same-origin stylesheets and scripts (uPlot's files), which a
// script still needs the nonce for.
function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    "style-src 'self' 'unsafe-inline'",
    `script-src 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function sendReportPage(reply: FastifyReply, status: number, page: PageOptions & { scriptNonce: string }) {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', contentSecurityPolicy(page.scriptNonce))
    .header('referrer-policy', 'same-origin')
    .header('x-content-type-options', 'nosniff')
    .send(renderPage(page));
}

export function reportIndexPage(reply: FastifyReply): FastifyReply {
  return sendReportPage(reply, 200, {
    title: 'Reports',
    scriptNonce: newScriptNonce(),
    body: html`<h1>Reports</h1>
      <p><a href="/">Back to the admin page</a></p>
      <ul class="links">
        ${REPORT_NAMES.map(
          (name) =>
            html`<li><a href="/admin/reports/${name}">${name}</a> — ${REPORT_DESCRIPTIONS[name]}</li>`,
        )}
      </ul>`,
  });
}

function filterForm(input: ReportPageInput): Raw {
  const raw = input.raw;
  const text = (name: keyof RawReportQuery, label: string, placeholder: string) =>
    html`<label
      >${label} <input name="${name}" value="${raw[name] ?? ''}" placeholder="${placeholder}"
    /></label> `;
  return html`<form method="get" action="/admin/reports/${input.name}" id="report-filters">
    <p>
      <label
        >Connection
        <select name="connection">
          <option value="">All connections</option>
          ${input.connections.map(
            (c) =>
              html`<option value="${c.id}" ${c.id === raw.connection ? html`selected` : ''}>
                ${c.label}
              </option>`,
          )}
        </select></label
      >
      ${input.name === 'sync-health' ? '' : text('event', 'Event type id', 'all')}
    </p>
    <p>
      <label>From <input type="date" name="from" value="${raw.from ?? ''}" /></label>
      <label>To <input type="date" name="to" value="${raw.to ?? ''}" /></label>
      ${text('at', 'As of', 'now, or 2026-03-01T12:00:00Z')} ${text('tz', 'Time zone', "connection's own")}
      ${
        input.name === 'bookings'
          ? html`<label
              >By
              <select name="by">
                ${BOOKINGS_GROUPINGS.map(
                  (g) =>
                    html`<option value="${g}" ${g === (raw.by ?? 'day') ? html`selected` : ''}>${g}</option>`,
                )}
              </select></label
            >`
          : ''
      }
    </p>
    <p><button type="submit">Show</button></p>
  </form>`;
}

function heatMapTable(map: HeatMap): Raw {
  const counts = new Map(map.cells.map((c) => [`${c.weekday}:${c.hour}`, c.bookings]));
  const max = Math.max(1, ...map.cells.map((c) => c.bookings));
  const hours = Array.from({ length: 24 }, (_, h) => h);
  return html`<table id="heatmap" class="heatmap">
    <thead>
      <tr>
        <th></th>
        ${hours.map((h) => html`<th>${String(h).padStart(2, '0')}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${WEEKDAY_NAMES.map(
        (day, i) =>
          html`<tr>
            <th>${day}</th>
            ${hours.map((h) => {
              const n = counts.get(`${i + 1}:${h}`) ?? 0;
              const alpha = n === 0 ? 0 : 0.15 + (0.85 * n) / max;
              return html`<td
                data-weekday="${i + 1}"
                data-hour="${h}"
                data-bookings="${n}"
                title="${day} ${String(h).padStart(2, '0')}:00 — ${n} booked"
                style="background:rgba(37,99,235,${alpha.toFixed(3)});color:${alpha > 0.55 ? '#fff' : '#1d2327'}"
              >
                ${n === 0 ? '' : n}
              </td>`;
            })}
          </tr>`,
      )}
    </tbody>
  </table>`;
}

// Drawn in the browser; the labels are days, so the axis runs in UTC whatever the browser's zone.
const LINE_CHART_SCRIPT = `
const data = JSON.parse(document.getElementById('chart-data').textContent);
const el = document.getElementById('chart');
const chart = new uPlot({
  width: Math.max(320, Math.min(el.clientWidth || 900, 1000)), height: 300, title: data.title,
  tzDate: (ts) => uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC'),
  scales: { x: { time: true } },
  series: [{}, { label: data.yLabel, stroke: '#2563eb', fill: 'rgba(37,99,235,0.12)', width: 2,
    points: { show: true, size: 6 } }],
  axes: [{}, { label: data.yLabel }],
}, [data.x, data.y], el);
el.dataset.points = String(chart.data[0].length);
el.dataset.ready = 'true';
window.slotfeedChart = chart;
`;

/** JSON that is safe inside a <script> element: no "</script>" or "<!--" can be formed. */
function inertJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

function lineChart(chart: LineChart, nonce: string): Raw {
  return html`<link rel="stylesheet" href="/admin/assets/uplot.css" />
    <div id="chart" data-points="0"></div>
    <script type="application/json" id="chart-data">
      ${new Raw(inertJson(chart))}
    </script>
    <script src="/admin/assets/uplot.js" nonce="${nonce}"></script>
    <script nonce="${nonce}">
      ${new Raw(LINE_CHART_SCRIPT)};
    </script>`;
}

function resultTable(result: ReportResult): Raw {
  const columns = result.columns.filter((c) => c.inTable !== false);
  if (result.rows.length === 0) return html`<p id="report-empty">${result.emptyMessage}</p>`;
  return html`<table id="report-rows">
      <thead>
        <tr>
          ${columns.map((c) => html`<th>${c.label}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${result.rows.map(
          (row) =>
            html`<tr>
              ${columns.map((c) => html`<td>${formatValue(row[c.key] ?? null, c.kind)}</td>`)}
            </tr>`,
        )}
      </tbody>
    </table>
    <ul id="report-summary">
      ${result.summary.map((s) => html`<li>${s.label}: <strong>${formatValue(s.value, s.kind)}</strong></li>`)}
    </ul>`;
}

export function reportPage(reply: FastifyReply, status: number, input: ReportPageInput): FastifyReply {
  const nonce = newScriptNonce();
  const { result, chart } = input;
  return sendReportPage(reply, status, {
    title: `Report: ${input.name}`,
    scriptNonce: nonce,
    body: html`<h1>Report: ${input.name}</h1>
      <p><a href="/">Admin</a> · <a href="/admin/reports">All reports</a></p>
      <p class="muted">${REPORT_DESCRIPTIONS[input.name]}</p>
      ${filterForm(input)} ${input.error ? html`<p class="error" id="report-error">${input.error}</p>` : ''}
      ${
        result
          ? html`<p class="muted" id="report-caption">${result.caption}</p>
              ${input.csvHref ? html`<p><a id="csv-link" href="${input.csvHref}" download>Download CSV</a></p>` : ''}
              ${chart?.kind === 'line' && chart.x.length > 0 ? lineChart(chart, nonce) : ''}
              ${chart?.kind === 'heatmap' && chart.cells.length > 0 ? heatMapTable(chart) : ''}
              ${resultTable(result)}`
          : ''
      }`,
  });
}
