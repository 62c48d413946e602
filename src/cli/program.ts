// The `slotfeed` command line: parses arguments and hands over to the composition root (main.ts).
// Exit codes: 0 success, 1 failure, 2 bad usage or bad configuration.
import { DEFAULT_FEED_VIEW, DEFAULT_FREE_SUMMARY, FEED_VIEWS, type FeedView } from '../feeds/feed-options.js';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { ConfigError, describeVariables } from '../config.js';
import { coerceError } from '../lib/coerce-error.js';
import { redactText } from '../log.js';
import { runDemo } from '../demo/run-demo.js';
import { runDaemon, runFeeds, runMigrate, runSimulator, runSync, type Output } from './commands.js';
import { registerConnectionsCommand } from './connections-command.js';
import { registerReportCommand } from './report-command.js';

export interface CliIo {
  /** `columns`: the terminal's width, when stdout is one (tables are fitted to it). */
  stdout: Output & { isTTY: boolean; columns?: number };
  stderr: Output;
}

const processIo: CliIo = {
  stdout: {
    write: (text) => void process.stdout.write(text),
    isTTY: process.stdout.isTTY === true,
    get columns() {
      return process.stdout.columns;
    },
  },
  stderr: { write: (text) => void process.stderr.write(text) },
};

function integer(min: number, max: number) {
  return (value: string): number => {
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}, got "${value}"`);
    }
    return parsed;
  };
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export function buildProgram(env: Record<string, string | undefined>, io: CliIo = processIo): Command {
  const stdout = io.stdout;
  const program = new Command('slotfeed')
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
    // Errors throw instead of exiting, so runCli maps them to exit codes; subcommands inherit this setting
    // only when it is made before they are added.
    .exitOverride()
    .description(
      'Keeps a live, subscribable picture of free time from Calendbook: sync, snapshots and .ics feeds.',
    )
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      `\nConfiguration comes from environment variables:\n${describeVariables()
        .map(
          (v) =>
            `  ${v.name.padEnd(32)} ${v.default === undefined ? '(required)' : `default "${v.default}"`}`,
        )
        .join('\n')}\n`,
    );

  program
    .command('migrate')
    .description('Apply pending database migrations (prisma/migrations), as `prisma migrate deploy` would.')
    .option('--status', 'only list applied, pending, modified and failed migrations')
    .option(
      '--rolled-back <name>',
      'mark a failed migration as rolled back, so a fixed version can be applied',
    )
    .action(async (options: { status?: boolean; rolledBack?: string }) => {
      await runMigrate(env, { status: options.status ?? false, rolledBack: options.rolledBack }, stdout);
    });

  program
    .command('start')
    .description(
      'Run the daemon: scheduler, worker and web in one process (run `worker` alone to scale out).',
    )
    .option('--migrate', 'apply pending migrations before starting')
    .action(async (options: { migrate?: boolean }) => {
      if (options.migrate) await runMigrate(env, { status: false }, stdout);
      await runDaemon(env, ['scheduler', 'worker', 'web']);
    });

  program
    .command('worker')
    .description('Run sync workers only; start as many worker processes as the upstream rate limit allows.')
    .action(async () => runDaemon(env, ['worker']));

  program
    .command('web')
    .description('Run the web server only: feeds, the connect flow, admin, /healthz, /readyz and /metrics.')
    .action(async () => runDaemon(env, ['web']));

  program
    .command('scheduler')
    .description('Run the scheduler only: every tick, enqueue a sync for each connection that is due.')
    .action(async () => runDaemon(env, ['scheduler']));

  program
    .command('sync')
    .description(
      'Enqueue a sync now for the given connections (or all active ones); deduplicated with pending jobs.',
    )
    .argument('[connection-ids...]', 'connection ids (see `slotfeed connections list`)')
    .option('--all', 'every active connection')
    .option('--wait', 'follow the jobs to the end, with a progress bar on a terminal')
    .addOption(
      new Option('--timeout <seconds>', 'how long --wait waits').argParser(integer(1, 86_400)).default(600),
    )
    .action(
      async (
        ids: string[],
        options: { all?: boolean; wait?: boolean; timeout: number },
        command: Command,
      ) => {
        if ((ids.length === 0) === !options.all)
          command.error('give connection ids or --all (not both)', { exitCode: 2 });
        const malformed = ids.filter((id) => !/^[0-9a-f-]{36}$/i.test(id));
        if (malformed.length > 0)
          command.error(`not a connection id: ${malformed.join(', ')}`, { exitCode: 2 });
        const { failed } = await runSync(
          env,
          {
            connectionIds: ids,
            all: options.all ?? false,
            wait: options.wait ?? false,
            timeoutSeconds: options.timeout,
          },
          io.stdout,
        );
        if (failed > 0) throw new Error(`${failed} sync job(s) did not complete`);
      },
    );

  const uuid = (what: string) => (value: string) => {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) {
      throw new InvalidArgumentError(`not a ${what} id: "${value}"`);
    }
    return value;
  };
  const feeds = program.command('feeds').description('List, create, rotate and revoke .ics feeds.');
  feeds
    .command('list')
    .description('List feeds (their URLs cannot be shown again: rotate a feed to get a new one).')
    .addOption(new Option('--connection <id>', 'only this connection’s feeds').argParser(uuid('connection')))
    .option('--revoked', 'include revoked feeds')
    .action(async (o: { connection?: string; revoked?: boolean }) =>
      runFeeds(env, { kind: 'list', connectionId: o.connection, includeRevoked: o.revoked ?? false }, stdout),
    );
  feeds
    .command('create')
    .description('Create a feed for a connection and print its URL (shown only once).')
    .argument('<connection-id>', 'the connection', uuid('connection'))
    .option('--event <event-id>', 'only this event type (default: all; a secret one only this way)')
    .addOption(
      new Option('--view <view>', 'free: blocks of free time; slots: one event per bookable slot')
        .choices(FEED_VIEWS)
        .default(DEFAULT_FEED_VIEW),
    )
    .addOption(new Option('--days <n>', 'days ahead to show').argParser(integer(1, 366)))
    .option('--merge', 'slots view: join adjacent or overlapping slots of one event type into one block')
    .option('--summary <text>', `free view: the title of every block (default "${DEFAULT_FREE_SUMMARY}")`)
    .option('--label <text>', 'a note for operators')
    .action(
      async (
        connectionId: string,
        o: {
          event?: string;
          view: FeedView;
          days?: number;
          merge?: boolean;
          summary?: string;
          label?: string;
        },
      ) =>
        runFeeds(
          env,
          {
            kind: 'create',
            connectionId,
            eventId: o.event,
            view: o.view,
            days: o.days,
            merge: o.merge ?? false,
            summary: o.summary,
            label: o.label,
          },
          stdout,
        ),
    );
  feeds
    .command('rotate')
    .description('Give a feed a new URL; the old one stops working at once.')
    .argument('<feed-id>', 'the feed', uuid('feed'))
    .action(async (feedId: string) => runFeeds(env, { kind: 'rotate', feedId }, stdout));
  feeds
    .command('revoke')
    .description('Revoke a feed; its URL answers 404 from now on.')
    .argument('<feed-id>', 'the feed', uuid('feed'))
    .action(async (feedId: string) => runFeeds(env, { kind: 'revoke', feedId }, stdout));

  program
    .command('simulator')
    .description('Run a simulated Calendbook (API + OAuth server) on loopback, for the demo and for tests.')
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .addOption(new Option('--port <n>', 'port to listen on').argParser(integer(0, 65535)).default(4010))
    .addOption(
      new Option('--users <n>', 'number of simulated users').argParser(integer(1, 10_000)).default(5),
    )
    .addOption(
      new Option('--seed <k>', 'seed of the generated data').argParser(integer(0, 2 ** 31 - 1)).default(1),
    )
    .option('--client-id <id>', 'registered OAuth client id', 'slotfeed-local')
    .option('--client-secret <secret>', 'registered OAuth client secret', 'slotfeed-local-secret')
    .option(
      '--redirect-uri <uri>',
      'registered redirect URI (repeat for several; default http://127.0.0.1:3000/oauth/callback)',
      collect,
    )
    .addOption(
      new Option('--token-ttl <seconds>', 'access token lifetime')
        .argParser(integer(1, 86_400))
        .default(3600),
    )
    .option('--rotate-refresh-tokens', 'issue a new refresh token on every refresh; reuse revokes the grant')
    .addOption(
      new Option('--rate-limit <n>', 'requests per second per client before 429 (0 = off)')
        .argParser(integer(0, 100_000))
        .default(0),
    )
    .action(
      async (options: {
        host: string;
        port: number;
        users: number;
        seed: number;
        clientId: string;
        clientSecret: string;
        redirectUri?: string[];
        tokenTtl: number;
        rotateRefreshTokens?: boolean;
        rateLimit: number;
      }) => {
        await runSimulator(
          env,
          {
            host: options.host,
            port: options.port,
            users: options.users,
            seed: options.seed,
            clientId: options.clientId,
            clientSecret: options.clientSecret,
            redirectUris: options.redirectUri ?? ['http://127.0.0.1:3000/oauth/callback'],
            accessTokenTtlSeconds: options.tokenTtl,
            rotateRefreshTokens: options.rotateRefreshTokens ?? false,
            requestsPerSecondPerClient: options.rateLimit,
          },
          stdout,
        );
      },
    );

  program
    .command('demo')
    .description(
      'Show the whole system: Postgres and Redis (found or started), the simulator, three accounts connected ' +
        'through OAuth, their first syncs, and their feed URLs; then run until Ctrl-C.',
    )
    .addOption(
      new Option('--accounts <n>', 'simulated accounts to connect').argParser(integer(1, 5)).default(3),
    )
    .addOption(
      new Option('--sync-timeout <seconds>', 'how long to wait for the first syncs')
        .argParser(integer(1, 3600))
        .default(120),
    )
    .action(async (options: { accounts: number; syncTimeout: number }) =>
      runDemo(env, io.stdout, { accounts: options.accounts, syncTimeoutSeconds: options.syncTimeout }),
    );

  registerConnectionsCommand(program, env, stdout);
  registerReportCommand(program, env, io);

  return program;
}

export async function runCli(
  argv: string[],
  env: Record<string, string | undefined>,
  io: CliIo = processIo,
): Promise<number> {
  const program = buildProgram(env, io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (thrown: unknown) {
    if (thrown instanceof CommanderError) {
      // --help and --version end here too, with exit code 0; commander has already printed the message.
      return thrown.exitCode === 0 ? 0 : 2;
    }
    if (thrown instanceof ConfigError) {
      io.stderr.write(`${thrown.message}\nSee README.md, "Configuration".\n`);
      return 2;
    }
    io.stderr.write(`slotfeed: ${redactText(coerceError(thrown).message)}\n`);
    return 1;
  }
}
