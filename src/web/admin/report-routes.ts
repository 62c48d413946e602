// The admin's report pages, their CSV downloads, and uPlot's script and stylesheet served from node_modules
// (no CDN: the pages load nothing from elsewhere). Registered inside the admin scope, so every route here is
// behind the admin guard.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  isReportName,
  parseReportQuery,
  ReportUsageError,
  type RawReportQuery,
  type ReportName,
  type ReportQuery,
} from '../../reports/report-query.js';
import type { ReportResult } from '../../reports/report-result.js';
import { ReportSubjectNotFoundError, runReport, runReportCsv } from '../../reports/run-report.js';
import { spooled } from '../../lib/spooled-file.js';
import { HttpError } from '../http-error.js';
import {
  reportIndexPage,
  reportPage,
  TABLE_ROWS_SHOWN,
  type HeatMap,
  type LineChart,
} from './report-pages.js';
import type { ReportConnectionChoice } from '../../store/reports.js';
import type { WebDeps } from '../web-deps.js';

const QUERY_KEYS = ['connection', 'event', 'from', 'to', 'at', 'tz', 'by'] as const;

function rawQueryOf(request: FastifyRequest): RawReportQuery {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const raw: RawReportQuery = {};
  for (const key of QUERY_KEYS) {
    const value = query[key];
    if (typeof value === 'string' && value.trim() !== '') raw[key] = value.trim().slice(0, 200);
  }
  return raw;
}

function reportNameOf(request: FastifyRequest): ReportName {
  const name = (request.params as { name?: string }).name ?? '';
  if (!isReportName(name)) throw new HttpError(404, 'No such report.');
  return name;
}

const DAY_SECONDS = 86_400;
const dayToSeconds = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000;
const secondsToDay = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);
/** Most days a line chart spans: a --from/--to of centuries must not make a page of a million points. */
export const MAX_CHART_DAYS = 3660;

/** One value per day, summed over the report's rows (all selected connections and event types): its day totals. */
function perDay(result: ReportResult, valueKey: string): Map<string, number> {
  return new Map((result.dayTotals ?? []).map((total) => [total.day, total.figures[valueKey] ?? 0]));
}

/**
 * Every day from `from` to `to` (each defaulting to the first or last of `days`, the days with data), so that a
 * day without data gets a point of its own at 0 instead of a line drawn across it. A range too long to draw
 * is cut to the days with data.
 */
export function everyDay(from: string | undefined, to: string | undefined, days: Iterable<string>): string[] {
  const known = [...days].sort();
  const first = from ?? known[0];
  const last = to ?? known[known.length - 1];
  if (first === undefined || last === undefined) return [];
  const fits = (a: string, b: string) => (dayToSeconds(b) - dayToSeconds(a)) / DAY_SECONDS < MAX_CHART_DAYS;
  const [start, end] = fits(first, last) ? [first, last] : [known[0], known[known.length - 1]];
  if (start === undefined || end === undefined) return [];
  const out: string[] = [];
  for (let s = dayToSeconds(start); s <= dayToSeconds(end) && out.length < MAX_CHART_DAYS; s += DAY_SECONDS) {
    out.push(secondsToDay(s));
  }
  return out;
}

/** The line chart of availability or utilization: one point per day of the range, days without data at 0. */
export function lineChartOf(query: ReportQuery, result: ReportResult): LineChart | undefined {
  if (query.report === 'availability') {
    const free = perDay(result, 'free_minutes');
    const days = everyDay(query.from, query.to, free.keys());
    return {
      kind: 'line',
      title: 'Free minutes per day',
      yLabel: 'free minutes',
      x: days.map(dayToSeconds),
      y: days.map((day) => free.get(day) ?? 0),
    };
  }
  if (query.report === 'utilization') {
    const offered = perDay(result, 'offered_minutes');
    const booked = perDay(result, 'booked_minutes');
    // Only past days have a share, and no day after the UTC date of `at` is past in any zone: a --to beyond it
    // ends the chart at the last day with data rather than with days that cannot have any.
    const lastPast = query.at.toISOString().slice(0, 10);
    const to = query.to !== undefined && query.to <= lastPast ? query.to : undefined;
    const days = everyDay(query.from, to, offered.keys());
    const share = (day: string) => {
      const n = offered.get(day) ?? 0;
      return n === 0 ? 0 : Math.round((1000 * (booked.get(day) ?? 0)) / n) / 10;
    };
    return {
      kind: 'line',
      title: 'Share of offered time booked, per day',
      yLabel: 'booked %',
      x: days.map(dayToSeconds),
      y: days.map(share),
    };
  }
  return undefined;
}

/**
 * Which zone the heat map's hours are in, as its caption says it: the store counts them in the zone asked for,
 * else in each connection's own (UTC for one never synced), as report-sql.ts's zoneOf does.
 */
export function heatMapZone(query: ReportQuery, choices: readonly ReportConnectionChoice[]): string {
  if (query.timezone !== undefined) return `in ${query.timezone} time`;
  if (query.connectionId === undefined) return 'each in its connection’s own time zone';
  const choice = choices.find((c) => c.id === query.connectionId);
  if (choice === undefined) return 'in the connection’s own time zone';
  return `in ${choice.timezone ?? 'UTC'} time`;
}

async function chartFor(
  deps: WebDeps,
  query: ReportQuery,
  result: ReportResult,
  choices: readonly ReportConnectionChoice[],
) {
  const line = lineChartOf(query, result);
  if (line) return line;
  if (query.report === 'bookings') {
    const heat: HeatMap = {
      kind: 'heatmap',
      zone: heatMapZone(query, choices),
      cells:
        query.by === 'weekday-hour'
          ? result.rows.map((r) => ({
              weekday: Number(r.weekday),
              hour: Number(r.hour),
              bookings: Number(r.bookings),
            }))
          : await deps.reports.bookingsByWeekdayHour(query),
    };
    return heat;
  }
  return undefined;
}

function csvHref(name: ReportName, raw: RawReportQuery): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(raw)) if (typeof value === 'string') params.set(key, value);
  const search = params.toString();
  return `/admin/reports/${name}/csv${search === '' ? '' : `?${search}`}`;
}

/** Reads one of uplot's dist files once, on first use. */
function uplotAsset(file: string): () => Promise<string> {
  let content: Promise<string> | undefined;
  return () => (content ??= readFile(createRequire(import.meta.url).resolve(`uplot/dist/${file}`), 'utf8'));
}

export function registerReportRoutes(admin: FastifyInstance, deps: WebDeps): void {
  const uplotJs = uplotAsset('uPlot.iife.min.js');
  const uplotCss = uplotAsset('uPlot.min.css');
  const asset = async (reply: FastifyReply, type: string, content: Promise<string>) =>
    reply
      .type(type)
      .header('cache-control', 'private, max-age=86400')
      .header('x-content-type-options', 'nosniff')
      .send(await content);

  admin.get('/admin/assets/uplot.js', async (_request, reply) =>
    asset(reply, 'text/javascript; charset=utf-8', uplotJs()),
  );
  admin.get('/admin/assets/uplot.css', async (_request, reply) =>
    asset(reply, 'text/css; charset=utf-8', uplotCss()),
  );

  admin.get('/admin/reports', async (_request, reply) => reportIndexPage(reply));

  admin.get('/admin/reports/:name', async (request, reply) => {
    const name = reportNameOf(request);
    const raw = rawQueryOf(request);
    const choices = await deps.reports.connectionChoices();
    const connections = choices.map((c) => ({ id: c.id, label: c.email ?? c.displayName ?? c.id }));
    try {
      const query = parseReportQuery(name, raw, deps.now());
      const result = await runReport(deps.reports, query, { firstRows: TABLE_ROWS_SHOWN });
      const chart = await chartFor(deps, query, result, choices);
      return reportPage(reply, 200, {
        name,
        raw,
        connections,
        result,
        ...(chart ? { chart } : {}),
        csvHref: csvHref(name, raw),
      });
    } catch (thrown: unknown) {
      if (thrown instanceof ReportUsageError || thrown instanceof ReportSubjectNotFoundError) {
        const status = thrown instanceof ReportUsageError ? 400 : 404;
        return reportPage(reply, status, { name, raw, connections, error: thrown.message });
      }
      throw thrown;
    }
  });

  admin.get('/admin/reports/:name/csv', async (request, reply) => {
    const name = reportNameOf(request);
    let query: ReportQuery;
    let file: Readable;
    try {
      query = parseReportQuery(name, rawQueryOf(request), deps.now());
      // Streamed from Postgres where the report can be (a year of connections' days is millions of rows) into a
      // file, then sent from it: the process never holds the whole CSV, and a slow download holds no database
      // connection and is not cut off by the role's statement timeout (lib/spooled-file.ts).
      file = await spooled(await runReportCsv(deps.reports, query));
    } catch (thrown: unknown) {
      if (thrown instanceof ReportUsageError) throw new HttpError(400, thrown.message);
      if (thrown instanceof ReportSubjectNotFoundError) throw new HttpError(404, thrown.message);
      throw thrown;
    }
    const stamp = query.at.toISOString().slice(0, 19).replace(/[-:]/g, '');
    return reply
      .type('text/csv; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-disposition', `attachment; filename="slotfeed-${name}-${stamp}.csv"`)
      .send(file);
  });
}
