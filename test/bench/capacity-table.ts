// The capacity model's table (docs/scaling.md) from bench-results.json: the unit costs the `unit-costs` bench
// measured, and those the `tick` and `worker-rss` benches add when they have run. The markdown is what run.ts
// prints and writes to bench-scaling.md, pasted into the docs as it is.
import type { BenchSection, BenchValue } from './bench-result.js';
import { SIZES, capacityModel, type UnitCosts } from './capacity-model.js';

type KeptSection = BenchSection & {
  bench?: string;
  run?: { measuredAt?: string; machine?: { loadAverage1mAtStart?: number; loadAverage1mAtEnd?: number } };
};

/** A figure of `bench`'s sections by name, when measured (a number). */
function figureOf(sections: readonly KeptSection[], bench: string, name: string): number | null {
  for (const section of sections) {
    if (section.bench !== bench) continue;
    const value: BenchValue | undefined = section.figures[name];
    if (typeof value === 'number' && Number.isFinite(value)) return value;
  }
  return null;
}

/**
 * The scheduler's Node CPU per connection due, from the tick bench's tick with the most due at its largest size:
 * a tick's cost at scale. The unit-costs bench's own figure divides the scheduler's fixed work (watchdog, gauges,
 * retention's calls) by the few syncs of 60 connections, so it is kept only when the tick bench has not run.
 */
function tickCpuMsPerDue(sections: readonly KeptSection[]): number | null {
  let best: { kept: number; due: number; cpuMs: number } | null = null;
  for (const section of sections) {
    if (section.bench !== 'tick') continue;
    for (const [name, value] of Object.entries(section.figures)) {
      const match = /^nodeCpuMs_(\d+)kept(\d+)due$/.exec(name);
      if (!match || typeof value !== 'number') continue;
      const [kept, due] = [Number(match[1]), Number(match[2])];
      if (!best || kept > best.kept || (kept === best.kept && due > best.due))
        best = { kept, due, cpuMs: value };
    }
  }
  return best ? best.cpuMs / best.due : null;
}

export function unitCostsOf(sections: readonly KeptSection[]): UnitCosts {
  const unit = (name: string) => figureOf(sections, 'unit-costs', name);
  return {
    syncsPerConnectionHour: unit('syncsPerConnectionHour'),
    callsPerConnectionHour: unit('callsPerConnectionHour'),
    workerCpuMsPerSyncFixed: unit('workerCpuMsPerSyncFixed'),
    workerCpuMsPerCall: unit('workerCpuMsPerCall'),
    schedulerCpuMsPerSync: tickCpuMsPerDue(sections) ?? unit('schedulerCpuMsPerSync'),
    redisCommandsPerSyncFixed: unit('redisCommandsPerSyncFixed'),
    redisCommandsPerCall: unit('redisCommandsPerCall'),
    redisCpuMsPerSyncFixed: unit('redisCpuMsPerSyncFixed'),
    redisCpuMsPerCall: unit('redisCpuMsPerCall'),
    redisBytesInPerSyncFixed: unit('redisBytesInPerSyncFixed'),
    redisBytesInPerCall: unit('redisBytesInPerCall'),
    redisBytesOutPerSyncFixed: unit('redisBytesOutPerSyncFixed'),
    redisBytesOutPerCall: unit('redisBytesOutPerCall'),
    postgresRowWritesPerSync: unit('postgresRowWritesPerSync'),
    workerCpuMsPerPush: unit('workerCpuMsPerPush'),
    redisCommandsPerPush: unit('redisCommandsPerPush'),
    redisCpuMsPerPush: unit('redisCpuMsPerPush'),
    redisBytesInPerPush: unit('redisBytesInPerPush'),
    redisBytesOutPerPush: unit('redisBytesOutPerPush'),
    postgresRowWritesPerPush: unit('postgresRowWritesPerPush'),
    caldavBytesSentPerPush: unit('caldavBytesSentPerPush'),
    workerCpuMsPerDelivery: unit('workerCpuMsPerDelivery'),
    redisCommandsPerDelivery: unit('redisCommandsPerDelivery'),
    redisCpuMsPerDelivery: unit('redisCpuMsPerDelivery'),
    redisBytesInPerDelivery: unit('redisBytesInPerDelivery'),
    redisBytesOutPerDelivery: unit('redisBytesOutPerDelivery'),
    postgresRowWritesPerDelivery: unit('postgresRowWritesPerDelivery'),
    webhookBytesSentPerDelivery: unit('webhookBytesSentPerDelivery'),
    webCpuMsPerFeed200Rendered: unit('webCpuMsPerFeed200Rendered'),
    webCpuMsPerFeed304: unit('webCpuMsPerFeed304'),
    webCpuMsPerShareView: unit('webCpuMsPerShareView'),
    redisCommandsPerFeed200: unit('redisCommandsPerFeed200'),
    redisCommandsPerFeed304: unit('redisCommandsPerFeed304'),
    redisCommandsPerShareView: unit('redisCommandsPerShareView'),
    redisCpuMsPerFeed200: unit('redisCpuMsPerFeed200'),
    redisCpuMsPerShareView: unit('redisCpuMsPerShareView'),
    feedBytesGzip: unit('feedBytesGzip'),
    feed304Bytes: unit('feed304Bytes'),
    shareBytesGzip: unit('shareBytesGzip'),
    rowsPerConnectionDay: unit('rowsPerConnectionDay'),
    changeRowWritesPerConnectionDay: unit('changeRowWritesPerConnectionDay'),
    mibPerConnectionYearWithRetention: unit('mibPerConnectionYearWithRetention'),
    // Measured at 100,000 connections by worker-rss; else this bench's own, at a few dozen (fixed costs included).
    redisMemoryBytesPerConnection:
      figureOf(sections, 'worker-rss', 'redisBytesPerConnection') ??
      unit('redisUsedMemoryBytesPerConnection'),
    tickMsAt1M: figureOf(sections, 'tick', 'tickMsAt1M'),
    workerRssMiBAt100k: figureOf(sections, 'worker-rss', 'rssMiBAt100k'),
  };
}

/** Three significant figures (whole numbers kept whole, four decimals at most): 1,234,567 / 12.3 / 0.0456. */
export function roundFigure(value: number): number {
  if (value === 0 || !Number.isFinite(value)) return value;
  const digits = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(value))));
  return Number(value.toFixed(Math.min(digits, 4)));
}

export function formatFigure(value: number | null): string {
  if (value === null) return 'not measured';
  if (Number.isNaN(value)) return '—';
  return roundFigure(value).toLocaleString('en-US', { maximumFractionDigits: 4 });
}

/** The unit costs as the table prints them: what it multiplies, so the docs' own figures reproduce its rows. */
export function printedCosts(costs: UnitCosts): UnitCosts {
  return Object.fromEntries(
    Object.entries(costs).map(([name, value]) => [name, value === null ? null : roundFigure(value)]),
  ) as unknown as UnitCosts;
}

/** The unit costs back from the table's text (docs/scaling.md), as printedCosts gave them. */
export function costsFromMarkdown(markdown: string): Partial<Record<keyof UnitCosts, number | null>> {
  const costs: Partial<Record<keyof UnitCosts, number | null>> = {};
  for (const match of markdown.matchAll(/^\|\s*([A-Za-z0-9]+)\s*\|\s*([^|]+?)\s*\|\s*$/gm)) {
    const [, name, text] = match;
    if (!name || text === undefined || name === 'Unit') continue;
    costs[name as keyof UnitCosts] = text === 'not measured' ? null : Number(text.replaceAll(',', ''));
  }
  return costs;
}

/** Where the unit costs came from: each section's run, with its time and the machine's load. */
function provenance(sections: readonly KeptSection[]): string {
  const runs = new Map<string, string>();
  for (const section of sections) {
    if (!section.bench || !['unit-costs', 'tick', 'worker-rss'].includes(section.bench)) continue;
    const at = section.run?.measuredAt ?? 'unknown time';
    const machine = section.run?.machine;
    runs.set(
      section.bench,
      `\`${section.bench}\` at ${at.slice(0, 16).replace('T', ' ')} UTC (1-minute load ${machine?.loadAverage1mAtStart ?? '?'} → ${machine?.loadAverage1mAtEnd ?? '?'})`,
    );
  }
  return runs.size === 0 ? 'no unit costs measured yet' : [...runs.values()].join('; ');
}

export function capacityMarkdown(measured: UnitCosts, sections: readonly KeptSection[] = []): string {
  const costs = printedCosts(measured);
  const sizes = SIZES.map((n) => n.toLocaleString('en-US'));
  const rows = capacityModel(costs).map(
    (r) => `| ${r.name} (${r.unit}) | ${r.values.map(formatFigure).join(' | ')} | ${r.from} |`,
  );
  const units = Object.entries(costs).map(([name, value]) => `| ${name} | ${formatFigure(value)} |`);
  return [
    `Measured: ${provenance(sections)}.`,
    '',
    `| Resource | ${sizes.join(' | ')} | from |`,
    `| --- | ${sizes.map(() => '---:').join(' | ')} | --- |`,
    ...rows,
    '',
    'Unit costs the table multiplies:',
    '',
    '| Unit cost | Measured |',
    '| --- | ---: |',
    ...units,
    '',
  ].join('\n');
}
