// The freshness frontier: for each band configuration the freshness benches ran, calls per connection-hour
// against p50/p95 staleness per report band (lib/date-bands.ts), with the fixed 15-minute schedule as the
// reference point. Read from the sections of bench-results.json (so a run of one freshness bench plots with
// the other's last figures), printed as a Markdown table and drawn as a small hand-written SVG: one panel per
// run (counted, real syncs), x the calls, y the p95 on a log scale, one colour per report band.
import { DATE_BANDS } from '../../src/lib/date-bands.js';
import type { BenchSection, BenchValue } from './bench-result.js';

export type FrontierRun = 'counted' | 'real syncs';

export interface FrontierPoint {
  run: FrontierRun;
  bands: string;
  adapt: string;
  /** SYNC_ACCOUNT_INTERVAL; '' for a run from before the setting. */
  account: string;
  /** The configuration held to the issue's targets: the settings' defaults when the bench ran. */
  isDefault: boolean;
  callsPerConnectionHour: number;
  /** Per report band: p50 and p95 in minutes (null: no change measured there) and how many changes. */
  staleness: Record<string, { p50: number | null; p95: number | null; changes: number }>;
}

/** The inputs a freshness section names its configuration by, and its kind of run. */
export const FRONTIER_INPUTS = {
  bands: 'SYNC_BANDS',
  adapt: 'SYNC_ADAPT_FACTORS',
  account: 'SYNC_ACCOUNT_INTERVAL',
  run: 'frontier run',
};

export const FIXED_BANDS = '*=15m';

const numberOr = (value: BenchValue | undefined): number | null => (typeof value === 'number' ? value : null);

/** The frontier points among `sections`: those a freshness bench marked with its run and configuration. */
export function frontierPoints(sections: readonly BenchSection[]): FrontierPoint[] {
  return sections.flatMap((section) => {
    const run = section.inputs[FRONTIER_INPUTS.run];
    const bands = section.inputs[FRONTIER_INPUTS.bands];
    const adapt = section.inputs[FRONTIER_INPUTS.adapt];
    const calls = numberOr(section.figures['calls per connection-hour']);
    if ((run !== 'counted' && run !== 'real syncs') || typeof bands !== 'string' || calls === null) return [];
    const staleness = Object.fromEntries(
      DATE_BANDS.map((band) => [
        band.name,
        {
          p50: numberOr(section.figures[`${band.name} p50 min`]),
          p95: numberOr(section.figures[`${band.name} p95 min`]),
          changes: numberOr(section.figures[`${band.name} changes`]) ?? 0,
        },
      ]),
    );
    const account = String(section.inputs[FRONTIER_INPUTS.account] ?? '');
    const isDefault = section.targets !== undefined;
    return [
      {
        run,
        bands,
        adapt: String(adapt ?? ''),
        account,
        isDefault,
        callsPerConnectionHour: calls,
        staleness,
      },
    ];
  });
}

const fixedOf = (points: readonly FrontierPoint[], run: FrontierRun) =>
  points.find((p) => p.run === run && p.bands === FIXED_BANDS);

const format = (value: number | null) => (value === null ? '—' : value.toFixed(1));

/** The frontier as a Markdown table, runs apart, each configuration's calls also as a share of fixed. */
export function frontierTable(points: readonly FrontierPoint[]): string {
  const header = [
    'run',
    'SYNC_BANDS',
    'SYNC_ADAPT_FACTORS',
    'SYNC_ACCOUNT_INTERVAL',
    'calls / connection-hour',
    '× fixed',
    ...DATE_BANDS.map((band) => `${band.name} p50 / p95 min`),
  ];
  const rows = points.map((point) => {
    const fixed = fixedOf(points, point.run);
    const ratio = fixed ? point.callsPerConnectionHour / fixed.callsPerConnectionHour : null;
    return [
      point.run,
      `\`${point.bands}\`${point.isDefault ? ' (default)' : ''}`,
      point.adapt,
      point.account,
      format(point.callsPerConnectionHour),
      ratio === null ? '—' : ratio.toFixed(2),
      ...DATE_BANDS.map((band) => {
        const s = point.staleness[band.name]!;
        return `${format(s.p50)} / ${format(s.p95)}`;
      }),
    ];
  });
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

const BAND_COLOURS: Record<string, string> = {
  '0-24h': '#d7301f',
  '1-3d': '#fc8d59',
  '3-7d': '#4575b4',
  '7d+': '#91bfdb',
};

const escapeXml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A round upper bound for an axis: 1, 2 or 5 times a power of ten, at least `value`. */
function niceCeiling(value: number): number {
  const power = 10 ** Math.floor(Math.log10(Math.max(value, 1)));
  return [1, 2, 5, 10].map((m) => m * power).find((v) => v >= value)!;
}

const LOG_TICKS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000];

interface Panel {
  run: FrontierRun;
  top: number;
}

/**
 * The frontier as an SVG: per run a panel of p95 staleness (log scale) against calls per connection-hour,
 * each configuration a column of dots (one per report band) numbered as in the legend below, the fixed
 * schedule's calls a dashed line, and 5 minutes (the 0–24 h target) a dotted one.
 */
export function frontierSvg(points: readonly FrontierPoint[], title: string): string {
  const keyOf = (p: FrontierPoint) => `${p.bands}|${p.adapt}|${p.account}`;
  const configurations = [...new Map(points.map((p) => [keyOf(p), p])).values()];
  const numberOf = (p: FrontierPoint) => configurations.findIndex((c) => keyOf(c) === keyOf(p)) + 1;
  const runs = (['counted', 'real syncs'] as const).filter((run) => points.some((p) => p.run === run));
  const width = 760;
  const left = 64;
  const right = 24;
  const panelHeight = 260;
  const gap = 56;
  const titleHeight = 40;
  const panels: Panel[] = runs.map((run, i) => ({ run, top: titleHeight + i * (panelHeight + gap) }));
  const legendTop = titleHeight + runs.length * (panelHeight + gap) - 16;
  const height = legendTop + 48 + configurations.length * 18 + 12;
  const p95s = points.flatMap((p) =>
    Object.values(p.staleness).flatMap((s) => (s.p95 === null ? [] : [s.p95])),
  );
  const yMax = LOG_TICKS.find((t) => t >= Math.max(10, ...p95s)) ?? 1000;
  const yMin = 1;
  const plotWidth = width - left - right;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="24" font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
  );
  for (const panel of panels) {
    const own = points.filter((p) => p.run === panel.run);
    const xMax = niceCeiling(Math.max(...own.map((p) => p.callsPerConnectionHour)) * 1.1);
    const x = (calls: number) => left + (calls / xMax) * plotWidth;
    const y = (minutes: number) =>
      panel.top +
      panelHeight -
      ((Math.log10(Math.max(minutes, yMin)) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) *
        panelHeight;
    const bottom = panel.top + panelHeight;
    out.push(
      `<rect x="${left}" y="${panel.top}" width="${plotWidth}" height="${panelHeight}" fill="none" stroke="#888"/>`,
      `<text x="${left + 6}" y="${panel.top + 16}" font-weight="bold">${escapeXml(panel.run === 'counted' ? 'counted run' : 'real-sync run')}</text>`,
    );
    for (const tick of LOG_TICKS.filter((t) => t <= yMax)) {
      out.push(
        `<line x1="${left}" x2="${left + plotWidth}" y1="${y(tick)}" y2="${y(tick)}" stroke="#eee"/>`,
        `<text x="${left - 6}" y="${y(tick) + 4}" text-anchor="end">${tick}</text>`,
      );
    }
    for (let i = 0; i <= 5; i++) {
      const calls = (xMax / 5) * i;
      out.push(
        `<line x1="${x(calls)}" x2="${x(calls)}" y1="${bottom}" y2="${bottom + 4}" stroke="#888"/>`,
        `<text x="${x(calls)}" y="${bottom + 16}" text-anchor="middle">${Math.round(calls)}</text>`,
      );
    }
    out.push(
      `<text x="${left + plotWidth / 2}" y="${bottom + 32}" text-anchor="middle">upstream calls per connection-hour</text>`,
      `<text transform="translate(16 ${panel.top + panelHeight / 2}) rotate(-90)" text-anchor="middle">p95 staleness, minutes (log)</text>`,
      `<line x1="${left}" x2="${left + plotWidth}" y1="${y(5)}" y2="${y(5)}" stroke="${BAND_COLOURS['0-24h']}" stroke-dasharray="2 3"/>`,
      `<text x="${left + plotWidth - 4}" y="${y(5) - 4}" text-anchor="end" fill="${BAND_COLOURS['0-24h']}">5 min</text>`,
    );
    const fixed = fixedOf(own, panel.run);
    if (fixed) {
      const fx = x(fixed.callsPerConnectionHour);
      out.push(
        `<line x1="${fx}" x2="${fx}" y1="${panel.top}" y2="${bottom}" stroke="#333" stroke-dasharray="6 4"/>`,
        `<text x="${fx - 4}" y="${panel.top + 16}" text-anchor="end">fixed 15 min</text>`,
      );
    }
    for (const point of own) {
      const px = x(point.callsPerConnectionHour);
      const near = point.staleness['0-24h']?.p95;
      for (const band of DATE_BANDS) {
        const p95 = point.staleness[band.name]?.p95;
        if (p95 === null || p95 === undefined) continue;
        out.push(
          `<circle cx="${px}" cy="${y(p95)}" r="4" fill="${BAND_COLOURS[band.name]}" stroke="#333" stroke-width="0.5"><title>${escapeXml(`${point.bands} (${point.adapt}): ${band.name} p95 ${p95} min at ${point.callsPerConnectionHour} calls`)}</title></circle>`,
        );
      }
      if (point.isDefault) {
        out.push(
          `<rect x="${px - 8}" y="${panel.top + 4}" width="16" height="${panelHeight - 8}" fill="none" stroke="#333" stroke-dasharray="2 2"/>`,
        );
      }
      if (near !== null && near !== undefined) {
        out.push(`<text x="${px + 6}" y="${y(near) + 14}" font-size="11">${numberOf(point)}</text>`);
      }
    }
  }
  // Legend: the bands' colours, then the numbered configurations.
  let lx = left;
  for (const band of DATE_BANDS) {
    out.push(
      `<circle cx="${lx + 5}" cy="${legendTop + 4}" r="4" fill="${BAND_COLOURS[band.name]}" stroke="#333" stroke-width="0.5"/>`,
      `<text x="${lx + 14}" y="${legendTop + 8}">${band.name}</text>`,
    );
    lx += 80;
  }
  out.push(
    `<text x="${left}" y="${legendTop + 30}">configurations (SYNC_BANDS, SYNC_ADAPT_FACTORS, SYNC_ACCOUNT_INTERVAL):</text>`,
  );
  configurations.forEach((c, i) => {
    const account = c.account === '' ? '' : `, account ${c.account}`;
    const role = c.bands === FIXED_BANDS ? ' (fixed reference)' : c.isDefault ? ' (the default, boxed)' : '';
    const label = `${i + 1}   ${c.bands}, adapt ${c.adapt}${account}${role}`;
    out.push(`<text x="${left}" y="${legendTop + 48 + i * 18}">${escapeXml(label)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
