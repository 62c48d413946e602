// The alert rules and the Grafana dashboard that ship in deploy/: Prometheus's own promtool checks the rules and
// runs their unit tests, and every metric they and the dashboard read is one slotfeed exports (a renamed metric
// must not leave an alert that can never fire).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import { createMetrics } from '../../src/lib/metrics.js';
import { registerStateGauges } from '../../src/lib/state-gauges.js';
import { parseCadenceBands } from '../../src/config/sync-bands.js';
import { DATE_BANDS } from '../../src/lib/date-bands.js';

const run = promisify(execFile);
const DEPLOY = path.resolve(import.meta.dirname, '../../deploy');
const RULES = path.join(DEPLOY, 'prometheus/slotfeed-alerts.yml');
const RULE_TESTS = path.join(DEPLOY, 'prometheus/slotfeed-alerts.test.yml');
const DASHBOARD = path.join(DEPLOY, 'grafana/slotfeed-dashboard.json');

/** Every metric name slotfeed's processes export (the scheduler's state gauges included). */
function exportedNames(): Set<string> {
  const metrics = createMetrics();
  registerStateGauges(metrics.registry, {
    connectionsByStatus: async () => ({}),
    queueJobs: async () => [],
  });
  return new Set(metrics.registry.getMetricsAsArray().map((m) => m.name));
}

/** The slotfeed_* series an expression reads, histogram suffixes mapped back to their metric. */
function namesIn(expression: string): string[] {
  return [...expression.matchAll(/\bslotfeed_[a-z0-9_]+/g)].map((m) =>
    m[0].replace(/_(bucket|sum|count)$/, ''),
  );
}

describe('deploy/prometheus/slotfeed-alerts.yml', () => {
  it('passes promtool check rules', async () => {
    const { stdout } = await run('promtool', ['check', 'rules', RULES]);
    expect(stdout).toContain('SUCCESS: 11 rules found');
  });

  it('passes its promtool unit tests (each alert fires when it should, not before)', async () => {
    const { stdout } = await run('promtool', ['test', 'rules', path.basename(RULE_TESTS)], {
      cwd: path.dirname(RULE_TESTS),
    });
    expect(stdout).toContain('SUCCESS');
  });

  it('reads only metrics slotfeed exports, and every alert has a unit test', () => {
    const exported = exportedNames();
    const rules = readFileSync(RULES, 'utf8');
    const expressions = [...rules.matchAll(/expr: (?:\|\n)?([\s\S]*?)\n\s+(?:for|labels):/g)].map(
      (m) => m[1]!,
    );
    expect(expressions.length).toBe(11);
    for (const name of expressions.flatMap(namesIn)) expect([name, exported.has(name)]).toEqual([name, true]);
    // Date bands are named in sync/date-bands.ts; a rule naming another would never match a series.
    const bands = [...rules.matchAll(/band="([^"]+)"/g)].map((m) => m[1]!);
    expect(bands.length).toBeGreaterThan(0);
    for (const band of bands) expect(DATE_BANDS.map((b) => b.name)).toContain(band);
    // Cadence bands are named from SYNC_BANDS (config/sync-bands.ts): "the nearest band" must match the nearest
    // band's name whatever the configuration, and no other.
    const cadence = [...rules.matchAll(/band=~"([^"]+)"/g)].map((m) => new RegExp(`^${m[1]!}$`));
    expect(cadence).toHaveLength(1);
    for (const config of ['4d=10m,7d=40m,*=3h', '*=15m', '1d=5m,*=1h']) {
      const parsed = parseCadenceBands(config);
      if (!parsed.ok) throw new Error(parsed.error);
      expect(parsed.bands.map((band) => cadence[0]!.test(band.name))).toEqual(
        parsed.bands.map((_, i) => i === 0),
      );
    }
    const alerts = [...rules.matchAll(/- alert: (\w+)/g)].map((m) => m[1]!);
    const tested = new Set(
      [...readFileSync(RULE_TESTS, 'utf8').matchAll(/alertname: (\w+)/g)].map((m) => m[1]!),
    );
    expect(alerts.filter((alert) => !tested.has(alert))).toEqual([]);
  });
});

describe('deploy/grafana/slotfeed-dashboard.json', () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    panels: { id: number; title: string; targets: { expr: string }[] }[];
  };

  it('reads only metrics slotfeed exports, and shows every one of them', () => {
    const exported = exportedNames();
    const read = new Set(dashboard.panels.flatMap((p) => p.targets.flatMap((t) => namesIn(t.expr))));
    for (const name of read) expect([name, exported.has(name)]).toEqual([name, true]);
    const slotfeedMetrics = [...exported].filter((name) => name.startsWith('slotfeed_'));
    expect(slotfeedMetrics.filter((name) => !read.has(name))).toEqual([]);
  });

  it('has unique panel ids, each with a title and a query', () => {
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
    for (const panel of dashboard.panels) {
      expect(panel.title.length).toBeGreaterThan(0);
      expect(panel.targets.length).toBeGreaterThan(0);
    }
  });
});
