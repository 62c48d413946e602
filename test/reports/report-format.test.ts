// Pure pieces: fitting tables to a terminal, CSV quoting, and parsing report flags.
import { describe, expect, it } from '@jest/globals';
import { fittedWidths, formatTable, terminalWidth } from '../../src/lib/text-table.js';
import { formatValue, reportAsCsv } from '../../src/reports/report-format.js';
import { parseReportQuery } from '../../src/reports/report-query.js';
import type { ReportResult } from '../../src/reports/report-result.js';
import { runCapturedCli } from '../support/cli-run.js';

const NOW = new Date('2026-03-02T09:00:00Z');

describe('tables on a terminal', () => {
  const rows = [['a', 'x'.repeat(60), 'last column']];

  it('keep every cell whole without a width (pipes), and shorten the widest column to fit one', () => {
    expect(formatTable(['h1', 'wide', 'tail'], rows, 'none', {}).split('\n')[2]).toBe(
      `a   ${'x'.repeat(60)}  last column`,
    );
    const fitted = formatTable(['h1', 'wide', 'tail'], rows, 'none', { width: 40 });
    for (const line of fitted.trimEnd().split('\n')) expect(line.length).toBeLessThanOrEqual(40);
    expect(fitted.split('\n')[2]).toBe(`a   ${'x'.repeat(22)}…  last column`);
  });

  it('never shortens a column below 8 characters, and says so when empty', () => {
    expect(fittedWidths([30, 30], 10)).toEqual([8, 8]);
    expect(fittedWidths([5, 6], 80)).toEqual([5, 6]);
    expect(formatTable(['a'], [], 'Nothing here.', { width: 20 })).toBe('Nothing here.\n');
  });

  it('takes the width from a terminal only', () => {
    expect(terminalWidth({ isTTY: true, columns: 100 })).toBe(100);
    expect(terminalWidth({ isTTY: false, columns: 100 })).toBeUndefined();
  });
});

describe('CSV', () => {
  it('quotes commas, quotes and line breaks (RFC 4180), CRLF line ends, empty for null', () => {
    const result = {
      columns: [
        { key: 'a', label: 'a', kind: 'text' },
        { key: 'b', label: 'b', kind: 'integer' },
      ],
      rows: [{ a: 'say "hi", then\nleave', b: null }],
    } as unknown as ReportResult;
    expect(reportAsCsv(result)).toBe('a,b\r\n"say ""hi"", then\nleave",\r\n');
  });
});

describe('report flags', () => {
  it('accepts days, instants with offsets and IANA zones', () => {
    const query = parseReportQuery(
      'bookings',
      {
        from: '2026-03-01',
        to: '2026-03-01',
        at: '2026-03-01T12:00:00+01:00',
        tz: 'Europe/Berlin',
        by: 'week',
      },
      NOW,
    );
    expect(query).toMatchObject({
      from: '2026-03-01',
      to: '2026-03-01',
      timezone: 'Europe/Berlin',
      by: 'week',
      atGiven: true,
    });
    expect(query.at.toISOString()).toBe('2026-03-01T11:00:00.000Z');
    expect(parseReportQuery('availability', {}, NOW)).toMatchObject({ at: NOW, atGiven: false, by: 'day' });
  });

  it('refuses --by outside bookings and --event for sync-health', () => {
    expect(() => parseReportQuery('availability', { by: 'week' }, NOW)).toThrow(
      /--by applies to the bookings report only/,
    );
    expect(() => parseReportQuery('sync-health', { event: 'evt_1' }, NOW)).toThrow(/--event does not apply/);
  });
});

describe('a number in a table', () => {
  it('has one decimal in every row, so a column reads at one precision (sync-health’s calls/run)', () => {
    expect([48.57, 29.7, 8].map((n) => formatValue(n, 'number'))).toEqual(['48.6', '29.7', '8.0']);
  });
});

describe('a duration in a table', () => {
  it('reads as a person reads it: seconds under a minute, then minutes and hours', () => {
    expect(formatValue(45, 'duration')).toBe('45 s');
    expect(formatValue(59.4, 'duration')).toBe('59 s');
    expect(formatValue(59.6, 'duration')).toBe('1 min');
    expect(formatValue(870, 'duration')).toBe('15 min');
    expect(formatValue(3600, 'duration')).toBe('1 h');
    expect(formatValue(62.2 * 60, 'duration')).toBe('1 h 2 min');
    expect(formatValue(43_200, 'duration')).toBe('12 h');
  });

  it('is a dash when there is none, as every other kind', () => {
    expect(formatValue(null, 'duration')).toBe('—');
  });
});

describe('slotfeed report --help', () => {
  it('says what each report is per: utilization is per connection, as its rows are', async () => {
    const help = await runCapturedCli({}, ['report', 'utilization', '--help']);
    const text = (help.stdout + help.stderr).replace(/\s+/g, ' ');
    expect(text).toContain(
      'For past days, per connection: the share of the time offered for booking that was booked',
    );
    expect(text).not.toContain('per event type');
    // Why a row can count a booking and 0 booked minutes.
    expect(text).toContain(
      'Time booked, then offered again and still open when it came (a booking cancelled for good), counts no booked minutes',
    );
  });
});
