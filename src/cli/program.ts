// The `slotfeed` command line: parses arguments and hands over to the composition root (main.ts).
// Exit codes: 0 success, 1 failure, 2 bad usage or bad configuration.
import { once } from 'node:events';
import { Command, CommanderError, Option } from 'commander';
import { ConfigError, describeVariables } from '../config.js';
import { wholeNumber } from './argument-parsers.js';
import { configErrorMessage } from './config-error-message.js';
import { runDaemon, runMigrate, runSimulator, type Output } from './commands.js';
import { registerConnectionsCommand } from './connections-command.js';
import { registerTeamsCommand } from './teams-command.js';
import { registerApiKeysCommand } from './api-keys-command.js';
import { registerShareLinksCommand } from './share-links-command.js';
import { registerWebhooksCommand } from './webhooks-command.js';
import { registerFeedsCommand } from './feeds-command.js';
import { registerDestinationsCommand, type PasswordInput } from './destinations-command.js';
import { plainFailureMessage } from './plain-errors.js';
import { registerReportCommand, type ReportStdout } from './report-command.js';
import { registerSyncCommand } from './sync-command.js';
import { USAGE_HINT, UsageError } from './usage-error.js';

export interface CliIo {
  /** `columns`: the terminal's width, when stdout is one (tables are fitted to it). */
  stdout: ReportStdout;
  stderr: Output;
  /** Where `--password-stdin` reads from (the process's stdin when absent). */
  stdin?: PasswordInput;
}

const processStdin: PasswordInput = {
  get isTTY() {
    return process.stdin.isTTY === true;
  },
  async readAll() {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks).toString('utf8');
  },
};

const processIo: CliIo = {
  stdout: {
    write: (text) => void process.stdout.write(text),
    drained: () =>
      process.stdout.writableNeedDrain
        ? once(process.stdout, 'drain').then(() => undefined)
        : Promise.resolve(),
    isTTY: process.stdout.isTTY === true,
    get columns() {
      return process.stdout.columns;
    },
  },
  stderr: { write: (text) => void process.stderr.write(text) },
};

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
    .showHelpAfterError(USAGE_HINT)
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

  registerSyncCommand(program, env, stdout);
  registerFeedsCommand(program, env, stdout);

  program
    .command('simulator')
    .description('Run a simulated Calendbook (API + OAuth server) on loopback, for the demo and for tests.')
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .addOption(new Option('--port <n>', 'port to listen on').argParser(wholeNumber(0, 65535)).default(4010))
    .addOption(
      new Option('--users <n>', 'number of simulated users').argParser(wholeNumber(1, 10_000)).default(5),
    )
    .addOption(
      new Option('--seed <k>', 'seed of the generated data')
        .argParser(wholeNumber(0, 2 ** 31 - 1))
        .default(1),
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
        .argParser(wholeNumber(1, 86_400))
        .default(3600),
    )
    .option('--rotate-refresh-tokens', 'issue a new refresh token on every refresh; reuse revokes the grant')
    .addOption(
      new Option('--rate-limit <n>', 'requests per second per client before 429 (0 = off)')
        .argParser(wholeNumber(0, 100_000))
        .default(0),
    )
    .addOption(
      new Option(
        '--speed <n>',
        'simulated seconds per real second (time-compressed bookings and token expiry)',
      )
        .argParser(wholeNumber(1, 3600))
        .default(1),
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
        speed: number;
      }) => {
        await runSimulator(
          env,
          {
            host: options.host,
            port: options.port,
            users: options.users,
            seed: options.seed,
            clockSpeed: options.speed,
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
      new Option('--accounts <n>', 'simulated accounts to connect').argParser(wholeNumber(1, 5)).default(3),
    )
    .addOption(
      new Option('--sync-timeout <seconds>', 'how long to wait for the first syncs')
        .argParser(wholeNumber(1, 3600))
        .default(120),
    )
    .action(async (options: { accounts: number; syncTimeout: number }) => {
      // Loaded only for the demo: the daemon's processes never carry its embedded Postgres and simulator.
      const { runDemo } = await import('../demo/run-demo.js');
      await runDemo(env, io.stdout, { accounts: options.accounts, syncTimeoutSeconds: options.syncTimeout });
    });

  registerConnectionsCommand(program, env, stdout);
  registerTeamsCommand(program, env, stdout);
  registerApiKeysCommand(program, env, stdout);
  registerShareLinksCommand(program, env, stdout);
  registerWebhooksCommand(program, env, stdout);
  registerDestinationsCommand(program, env, { stdout, stdin: io.stdin ?? processStdin });
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
    if (thrown instanceof UsageError) {
      // As commander says its own usage errors.
      io.stderr.write(`error: ${thrown.message}\n${USAGE_HINT}\n`);
      return 2;
    }
    if (thrown instanceof ConfigError) {
      io.stderr.write(configErrorMessage(thrown, env));
      return 2;
    }
    io.stderr.write(`slotfeed: ${plainFailureMessage(thrown, env)}\n`);
    return 1;
  }
}
