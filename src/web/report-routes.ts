// The admin's report pages, their CSV downloads, and uPlot's script and stylesheet served from node_modules
// (no CDN: the pages load nothing from elsewhere). Registered inside the admin scope, so every route here is
// behind the admin guard.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bookingsByWeekdayHour } from '../reports/bookings-report.js';
import { reportAsCsv } from '../reports/report-format.js';
import {
  isReportName,
  parseReportQuery,
  ReportUsageError,
  type RawReportQuery,
  type ReportName,
  type ReportQuery,
} from '../reports/report-query.js';
import type { ReportResult } from '../reports/report-result.js';
import { ReportSubjectNotFoundError, runReport } from '../reports/run-report.js';
import { HttpError } from './http-error.js';
import { reportIndexPage, reportPage, type HeatMap, type LineChart } from './report-pages.js';
import type { WebDeps } from './web-deps.js';

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

const dayToSeconds = (day: string) => Date.parse(`${day}T00:00:00Z`) / 1000;

/** One value per day, summed over the report's rows (all selected connections and event types). */
function perDay(result: ReportResult, valueKey: string): Map<string, number> {
  const totals = new Map<string, number>();
  for (const row of result.rows) {
    const day = String(row.day);
    totals.set(day, (totals.get(day) ?? 0) + Number(row[valueKey] ?? 0));
  }
  return new Map([...totals].sort(([a], [b]) => a.localeCompare(b)));
}

async function chartFor(deps: WebDeps, query: ReportQuery, result: ReportResult) {
  if (query.report === 'availability') {
    const days = perDay(result, 'free_minutes');
    const chart: LineChart = {
      kind: 'line',
      title: 'Free minutes per day',
      yLabel: 'free minutes',
      x: [...days.keys()].map(dayToSeconds),
      y: [...days.values()],
    };
    return chart;
  }
  if (query.report === 'utilization') {
    const offered = perDay(result, 'offered_minutes');
    const booked = perDay(result, 'booked_minutes');
    const chart: LineChart = {
      kind: 'line',
      title: 'Share of offered time booked, per day',
      yLabel: 'booked %',
      x: [...offered.keys()].map(dayToSeconds),
      y: [...offered].map(([day, n]) => (n === 0 ? 0 : Math.round((1000 * (booked.get(day) ?? 0)) / n) / 10)),
    };
    return chart;
  }
  if (query.report === 'bookings') {
    const heat: HeatMap = {
      kind: 'heatmap',
      cells:
        query.by === 'weekday-hour'
          ? result.rows.map((r) => ({
              weekday: Number(r.weekday),
              hour: Number(r.hour),
              bookings: Number(r.bookings),
            }))
          : await bookingsByWeekdayHour(deps.prisma, query),
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
    const connections = (
      await deps.prisma.connection.findMany({
        orderBy: [{ email: 'asc' }, { id: 'asc' }],
        take: 500,
        select: { id: true, email: true, displayName: true },
      })
    ).map((c) => ({ id: c.id, label: c.email ?? c.displayName ?? c.id }));
    try {
      const query = parseReportQuery(name, raw, deps.now());
      const result = await runReport(deps.prisma, query);
      const chart = await chartFor(deps, query, result);
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
    let result: ReportResult;
    try {
      result = await runReport(deps.prisma, parseReportQuery(name, rawQueryOf(request), deps.now()));
    } catch (thrown: unknown) {
      if (thrown instanceof ReportUsageError) throw new HttpError(400, thrown.message);
      if (thrown instanceof ReportSubjectNotFoundError) throw new HttpError(404, thrown.message);
      throw thrown;
    }
    const stamp = result.query.at.toISOString().slice(0, 19).replace(/[-:]/g, '');
    return reply
      .type('text/csv; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-disposition', `attachment; filename="slotfeed-${name}-${stamp}.csv"`)
      .send(reportAsCsv(result));
  });
}
