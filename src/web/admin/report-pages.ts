// HTML of the admin's report pages: the filters (the CLI's flags as a GET form), a chart where one would rather
// look than read (uPlot, served from node_modules by report-routes.ts; the heat map is a table of coloured
// cells), the report's rows and a CSV link. Chart data travels as inert JSON and is drawn by one inline
// script carrying the page's nonce.
import { REPORT_DESCRIPTIONS } from '../../reports/report-descriptions.js';
import type { FastifyReply } from 'fastify';
import { formatValue } from '../../reports/report-format.js';
import {
  BOOKINGS_GROUPINGS,
  REPORT_NAMES,
  type RawReportQuery,
  type ReportName,
} from '../../reports/report-query.js';
import type { ColumnKind, ReportResult } from '../../reports/report-result.js';
import { WEEKDAY_NAMES } from '../../reports/bookings-report.js';
import { ADMIN_HOME } from './admin-pages.js';
import { html, newScriptNonce, Raw, renderPage, scrollBox, type PageOptions } from '../html.js';

/**
 * A line chart: x = every day of the range (seconds), y = one value per day. A report's day without data is 0
 * (a Sunday nobody works was booked 0 %); null is a day nothing was known, drawn as a gap.
 */
export interface LineChart {
  kind: 'line';
  title: string;
  yLabel: string;
  x: number[];
  y: (number | null)[];
}

export interface HeatMap {
  kind: 'heatmap';
  /** Which zone its hours are in, as its caption ends: "in Europe/Berlin time". */
  zone: string;
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
    nav: 'admin',
    scriptNonce: newScriptNonce(),
    body: html`<h1>Reports</h1>
      <p class="muted">
        Over the stored history of every sync; the same reports as <code>slotfeed report</code>.
      </p>
      <div class="grid">
        ${REPORT_NAMES.map(
          (name) =>
            html`<section class="card">
              <h2><a href="/admin/reports/${name}">${name}</a></h2>
              <p class="muted">${REPORT_DESCRIPTIONS[name]}</p>
            </section>`,
        )}
      </div>`,
  });
}

function filterForm(input: ReportPageInput): Raw {
  const raw = input.raw;
  const text = (name: keyof RawReportQuery, label: string, hint: string) =>
    html`<div class="field">
      <label for="filter-${name}">${label}</label>
      <input id="filter-${name}" name="${name}" value="${raw[name] ?? ''}" aria-describedby="hint-${name}" />
      <span class="hint" id="hint-${name}">${hint}</span>
    </div>`;
  return html`<form method="get" action="/admin/reports/${input.name}" id="report-filters" class="card">
    <div class="form-grid">
      <div class="field">
        <label for="filter-connection">Connection</label>
        <select id="filter-connection" name="connection">
          <option value="">All connections</option>
          ${input.connections.map(
            (c) =>
              html`<option value="${c.id}" ${c.id === raw.connection ? html`selected` : ''}>
                ${c.label}
              </option>`,
          )}
        </select>
      </div>
      ${input.name === 'sync-health' ? '' : text('event', 'Event type id', 'Empty: all event types')}
      <div class="field">
        <label for="filter-from">From</label>
        <input id="filter-from" type="date" name="from" value="${raw.from ?? ''}" />
      </div>
      <div class="field">
        <label for="filter-to">To</label>
        <input id="filter-to" type="date" name="to" value="${raw.to ?? ''}" />
      </div>
      ${text('at', 'As of', 'Empty: now; or an instant such as 2026-03-01T12:00:00Z')}
      ${text('tz', 'Time zone', 'Empty: each connection’s own')}
      ${
        input.name === 'bookings'
          ? html`<div class="field">
              <label for="filter-by">By</label>
              <select id="filter-by" name="by">
                ${BOOKINGS_GROUPINGS.map(
                  (g) =>
                    html`<option value="${g}" ${g === (raw.by ?? 'day') ? html`selected` : ''}>${g}</option>`,
                )}
              </select>
            </div>`
          : ''
      }
    </div>
    <button type="submit" class="button primary">Show</button>
  </form>`;
}

function heatMapTable(map: HeatMap): Raw {
  const counts = new Map(map.cells.map((c) => [`${c.weekday}:${c.hour}`, c.bookings]));
  const max = Math.max(1, ...map.cells.map((c) => c.bookings));
  const hours = Array.from({ length: 24 }, (_, h) => h);
  // A caption above the box, not in the table: should the table scroll sideways (counts of three digits on a
  // phone), its caption would too.
  return html`<figure class="chart-figure">
    <figcaption id="heatmap-caption">Bookings by the weekday and hour they start, ${map.zone}</figcaption>
    ${scrollBox(
      'Bookings by weekday and hour',
      html`<table id="heatmap" class="heatmap" aria-labelledby="heatmap-caption">
        <thead>
          <tr>
            <th></th>
            ${hours.map((h) => html`<th${h % 3 === 0 ? '' : html` class="minor-hour"`}>${String(h).padStart(2, '0')}</th>`)}
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
                  // Solid colours (blue mixed into white), so the cells and their text read the same in dark mode.
                  const mix = (channel: number) => Math.round(255 - (255 - channel) * alpha);
                  return html`<td
                    data-weekday="${i + 1}"
                    data-hour="${h}"
                    data-bookings="${n}"
                    title="${day} ${String(h).padStart(2, '0')}:00 — ${n} booked"
                    style="background:rgb(${mix(29)},${mix(91)},${mix(200)});color:${alpha > 0.5 ? '#fff' : '#1b1f24'}"
                  >
                    ${n === 0 ? '' : n}
                  </td>`;
                })}
              </tr>`,
          )}
        </tbody>
      </table>`,
    )}
  </figure>`;
}

// Drawn in the browser; the labels are days, so the axis runs in UTC whatever the browser's zone.
const LINE_CHART_SCRIPT = `
const data = JSON.parse(document.getElementById('chart-data').textContent);
const el = document.getElementById('chart');
// As wide as its box, down to a phone's: wider, it ran past its card at 360 px. The title is the figure's
// caption, which wraps; uPlot's own title does not, and was cut.
const chart = new uPlot({
  width: Math.max(200, Math.min(el.clientWidth || 900, 1000)), height: 300,
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

export function lineChart(chart: LineChart, nonce: string): Raw {
  return html`<link rel="stylesheet" href="/admin/assets/uplot.css" />
    <figure class="chart-figure">
      <figcaption id="chart-title">${chart.title}</figcaption>
      <div class="chart" role="region" aria-labelledby="chart-title" tabindex="0">
        <div id="chart" data-points="0"></div>
      </div>
    </figure>
    <script type="application/json" id="chart-data">
      ${new Raw(inertJson(chart))}
    </script>
    <script src="/admin/assets/uplot.js" nonce="${nonce}"></script>
    <script nonce="${nonce}">
      ${new Raw(LINE_CHART_SCRIPT)};
    </script>`;
}

// A value of one word (a day, an address, a number) or a time is never broken across lines, or a squeezed
// column reads "2026-" over "03-27"; prose (an error message) wraps. On a wide screen the table scrolls sideways
// in its box when its columns are wider than the screen; on a phone each row is a card, each value on a line with
// its column's name (stack-on-phone, label-beside in slotfeed.css).
/** A cell, named by its column for the phone's cards. */
function resultCell(text: string, kind: ColumnKind, label: string): Raw {
  const whole = kind !== 'text' || !/\s/.test(text);
  return html`<td role="cell" data-label="${label}" ${whole ? html` class="nowrap"` : ''}>${text}</td>`;
}

/**
 * Most rows the page's table lists. A report over every connection for a year is millions of rows (a day of each
 * connection): as a table, that page was a gigabyte or more of HTML, past what a string in Node can hold, and far
 * past what a browser lays out. The chart and the summary still count every row; the CSV lists them all.
 */
export const TABLE_ROWS_SHOWN = 1_000;

/** Where the table lists fewer rows than the report has: how many it lists, and where the rest are. */
function rowsCut(total: number, csvHref: string | undefined): Raw {
  if (total <= TABLE_ROWS_SHOWN) return html``;
  const count = (n: number) => n.toLocaleString('en-US');
  const rest = csvHref
    ? html`<a href="${csvHref}" download>the CSV</a> lists all ${count(total)}`
    : html`the CSV lists all ${count(total)}`;
  return html`<p class="muted" id="report-rows-cut">
    The table lists the first ${count(TABLE_ROWS_SHOWN)} of ${count(total)} rows, in the report's order;
    ${rest}. The chart and the totals below count every row.
  </p>`;
}

function resultTable(result: ReportResult, csvHref: string | undefined): Raw {
  const columns = result.columns.filter((c) => c.inTable !== false);
  if (result.rows.length === 0) return html`<p id="report-empty">${result.emptyMessage}</p>`;
  return html`${rowsCut(result.rowCount ?? result.rows.length, csvHref)}${scrollBox(
      'Report rows',
      html`<table id="report-rows" class="stack-on-phone label-beside" role="table">
        <thead role="rowgroup">
          <tr role="row">
            ${columns.map((c) => html`<th role="columnheader" scope="col">${c.label}</th>`)}
          </tr>
        </thead>
        <tbody role="rowgroup">
          ${result.rows.slice(0, TABLE_ROWS_SHOWN).map(
            (row) =>
              html`<tr role="row">
                ${columns.map((c) => resultCell(formatValue(row[c.key] ?? null, c.kind), c.kind, c.label))}
              </tr>`,
          )}
        </tbody>
      </table>`,
    )}
    <ul id="report-summary" class="card">
      ${result.summary.map((s) => html`<li>${s.label}: <strong>${formatValue(s.value, s.kind)}</strong></li>`)}
    </ul>`;
}

export function reportPage(reply: FastifyReply, status: number, input: ReportPageInput): FastifyReply {
  const nonce = newScriptNonce();
  const { result, chart } = input;
  return sendReportPage(reply, status, {
    title: `Report: ${input.name}`,
    nav: 'admin',
    scriptNonce: nonce,
    body: html`<p class="small">
        <a href="${ADMIN_HOME}">Connections</a> › <a href="/admin/reports">Reports</a>
      </p>
      <h1>Report: ${input.name}</h1>
      <p class="muted">${REPORT_DESCRIPTIONS[input.name]}</p>
      ${filterForm(input)}
      ${input.error ? html`<p class="error alert" role="alert" id="report-error">${input.error}</p>` : ''}
      ${
        result
          ? html`<p class="muted" id="report-caption">${result.caption}</p>
              ${input.csvHref ? html`<p><a id="csv-link" class="button small" href="${input.csvHref}" download>Download CSV</a></p>` : ''}
              ${chart?.kind === 'line' && chart.x.length > 0 ? lineChart(chart, nonce) : ''}
              ${chart?.kind === 'heatmap' && chart.cells.length > 0 ? heatMapTable(chart) : ''}
              ${resultTable(result, input.csvHref)}`
          : ''
      }`,
  });
}
