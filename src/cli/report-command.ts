// `slotfeed report <name>`: the reports over stored snapshots (src/reports), as a table fitted to the
// terminal, CSV or JSON. A bad flag value is a usage error (exit 2) with a message saying what to give
// instead; an unknown connection or event type is a failure (exit 1) that says where to find the ids.
import { REPORT_DESCRIPTIONS } from '../reports/report-descriptions.js';
import { StringDecoder } from 'node:string_decoder';
import type { Command } from 'commander';
import { Option } from 'commander';
import { loadConfig } from '../config.js';
import { Releasers } from '../lib/releasers.js';
import { createLoggerFor } from '../log.js';
import { openCommandDatabase } from '../composition/command-stores.js';
import { formatReport, REPORT_FORMATS, type ReportFormat } from '../reports/report-format.js';
import {
  BOOKINGS_GROUPINGS,
  parseReportQuery,
  ReportUsageError,
  type RawReportQuery,
  type ReportName,
} from '../reports/report-query.js';
import { runReport, runReportCsv } from '../reports/run-report.js';
import type { Output } from './commands.js';
import { UsageError } from './usage-error.js';
import { terminalWidth } from '../lib/text-table.js';

type Env = Record<string, string | undefined>;
export type ReportStdout = Output & {
  isTTY: boolean;
  columns?: number;
  /** Resolves once what was written has drained, where stdout is a stream a slow reader can hold back. */
  drained?: () => Promise<void>;
};

interface ReportFlags extends RawReportQuery {
  format: ReportFormat;
}

/** Writes `chunks` of UTF-8 text in order, a character cut across two chunks kept whole, at the pace stdout drains. */
async function writeChunks(chunks: AsyncIterable<Buffer | string>, stdout: ReportStdout): Promise<void> {
  const decoder = new StringDecoder('utf8');
  for await (const chunk of chunks) {
    stdout.write(typeof chunk === 'string' ? chunk : decoder.write(chunk));
    await stdout.drained?.();
  }
  const rest = decoder.end();
  if (rest !== '') stdout.write(rest);
}

/** Runs one report against DATABASE_URL and writes it; `now` is the instant reports default to. */
export async function runReportCommand(
  env: Env,
  name: ReportName,
  flags: ReportFlags,
  io: { stdout: ReportStdout; stderr: Output },
  now: Date = new Date(),
): Promise<void> {
  const query = parseReportQuery(name, flags, now);
  const config = loadConfig(env, ['database', 'log']);
  const logger = createLoggerFor(config.log);
  const releasers = new Releasers();
  // A report over a big history can take seconds: say so on a terminal, stay silent in a pipe.
  const showProgress = io.stdout.isTTY;
  if (showProgress) io.stderr.write(`Running the ${name} report…`);
  try {
    const { reports } = openCommandDatabase(config, releasers, logger);
    if (flags.format === 'csv') {
      // Written as it comes, a year of connections' days never held in memory whole (run-report.ts).
      const chunks = await runReportCsv(reports, query);
      if (showProgress) io.stderr.write('\r\u001b[K');
      await writeChunks(chunks, io.stdout);
      return;
    }
    const result = await runReport(reports, query);
    if (showProgress) io.stderr.write('\r\u001b[K');
    io.stdout.write(formatReport(result, flags.format, terminalWidth(io.stdout)));
  } catch (thrown: unknown) {
    if (showProgress) io.stderr.write('\r\u001b[K');
    throw thrown;
  } finally {
    await releasers.releaseAll(logger);
  }
}

/** Adds `report availability|bookings|utilization|sync-health` with the same flags on each. */
export function registerReportCommand(
  program: Command,
  env: Env,
  io: { stdout: ReportStdout; stderr: Output },
): void {
  const report = program
    .command('report')
    .description('Reports over the stored snapshots: availability, bookings, utilization, sync-health.');
  for (const name of Object.keys(REPORT_DESCRIPTIONS) as ReportName[]) {
    const command = report
      .command(name)
      .description(REPORT_DESCRIPTIONS[name])
      .option('--connection <id>', 'only this connection (see `slotfeed connections list`)')
      .option('--from <day>', 'first local day, YYYY-MM-DD')
      .option('--to <day>', 'last local day, YYYY-MM-DD (inclusive)')
      .option(
        '--at <instant>',
        'read the history as of this instant, e.g. 2026-03-01T12:00:00Z (default: now)',
      )
      .option('--tz <zone>', "IANA zone for days and hours (default: each connection's own)")
      .addOption(new Option('--format <format>', 'output format').choices(REPORT_FORMATS).default('table'));
    if (name !== 'sync-health') command.option('--event <event-id>', 'only this event type');
    if (name === 'bookings') {
      command.addOption(
        new Option('--by <grouping>', 'group bookings by day, by week, or by weekday and hour')
          .choices(BOOKINGS_GROUPINGS)
          .default('day'),
      );
    }
    command.action(async (flags: ReportFlags) => {
      try {
        await runReportCommand(env, name, flags, io);
      } catch (thrown: unknown) {
        throw thrown instanceof ReportUsageError ? new UsageError(thrown.message) : thrown;
      }
    });
  }
}
