// `slotfeed destinations list|add|remove|credentials|push|reconcile|pause|resume|log`: a feed's CalDAV destinations
// (destinations/caldav-destinations-service.ts), as the owner's and the admin's pages manage them. A password is
// never an argument: a command line is readable by every user of the machine (ps, /proc/<pid>/cmdline) and kept
// in shell history. It comes from SLOTFEED_CALDAV_PASSWORD, or from stdin with --password-stdin, and is printed
// nowhere. The commands need TOKEN_ENCRYPTION_KEY (the passwords are kept sealed) and no Redis: what they ask for
// is due in Postgres, and a worker's dispatcher queues it within seconds.
import { Option, type Command } from 'commander';
import { CalDavError } from '../caldav/index.js';
import { loadConfig } from '../config.js';
import { openCommandDestinations } from '../composition/command-stores.js';
import {
  DEFAULT_CALENDAR_NAME,
  InvalidDestinationError,
  waitingMessage,
} from '../destinations/caldav-destinations-service.js';
import { Releasers } from '../lib/releasers.js';
import { formatTable, terminalWidth } from '../lib/text-table.js';
import { createLoggerFor } from '../log.js';
import type { CaldavDestinationRecord } from '../store/caldav-destinations.js';
import { caldavFailureOf } from '../web/caldav/caldav-failure.js';
import { OUTPUT_FORMATS, uuidOf, wholeNumber, type OutputFormat } from './argument-parsers.js';
import type { Output } from './commands.js';
import { UsageError } from './usage-error.js';

type Env = Record<string, string | undefined>;
type Stdout = Output & { isTTY: boolean; columns?: number };

/** What a command reads a piped password from. */
export interface PasswordInput {
  /** A terminal, where a typed password would be echoed: --password-stdin refuses it. */
  isTTY: boolean;
  readAll(): Promise<string>;
}

/** The environment variable a password may come from instead of stdin. */
export const PASSWORD_ENV = 'SLOTFEED_CALDAV_PASSWORD';

const PASSWORD_HELP =
  `The password is never an argument (every user of the machine can read a command line, and shells keep it ` +
  `in their history): set ${PASSWORD_ENV}, or pipe it in with --password-stdin.`;

export type DestinationsAction =
  | { kind: 'list'; feedId?: string; format: OutputFormat }
  | {
      kind: 'add';
      feedId: string;
      serverUrl: string;
      username: string;
      calendarName?: string;
      passwordStdin: boolean;
      format: OutputFormat;
    }
  | { kind: 'remove'; destinationId: string; keepEvents: boolean }
  | { kind: 'credentials'; destinationId: string; username?: string; passwordStdin: boolean }
  | { kind: 'push' | 'reconcile' | 'pause' | 'resume'; destinationId: string }
  | { kind: 'log'; destinationId: string; limit: number; format: OutputFormat };

const minute = (date: Date | null) => (date ? date.toISOString().replace(/:\d\d\.\d{3}Z$/, 'Z') : '—');

/** The password from stdin (--password-stdin) or the environment; a usage error when neither gives one. */
async function passwordOf(env: Env, fromStdin: boolean, stdin: PasswordInput): Promise<string> {
  if (fromStdin) {
    if (stdin.isTTY) {
      throw new UsageError(
        `--password-stdin reads a pipe, not a terminal (it would show what is typed): printf '%s' "$PASSWORD" | slotfeed destinations …, or set ${PASSWORD_ENV}`,
      );
    }
    // A line ending is how `echo` and here-strings end what they send: not part of the password.
    const password = (await stdin.readAll()).replace(/\r?\n$/, '');
    if (password === '') throw new UsageError('--password-stdin read no password from stdin');
    return password;
  }
  const password = env[PASSWORD_ENV] ?? '';
  if (password === '') throw new UsageError(`no password given. ${PASSWORD_HELP}`);
  return password;
}

function state(d: CaldavDestinationRecord): string {
  if (d.state === 'failing' && d.retryAt !== null) return `failing, next try ${minute(d.retryAt)}`;
  return d.state === 'needs_credentials' ? 'needs new credentials' : d.state;
}

function describe(d: CaldavDestinationRecord): string {
  return `CalDAV destination ${d.id}: feed ${d.feedId} → "${d.calendarName}" (${d.calendarUrl}) as ${d.username}, ${state(d)}`;
}

/**
 * A CalDAV failure said as the pages say it, with the client's own words (the request and its answer) after it
 * for the operator; a destination refused as given (an empty user name) is a usage error.
 */
function explained(thrown: unknown): unknown {
  if (thrown instanceof InvalidDestinationError) return new UsageError(thrown.message);
  const failure = caldavFailureOf(thrown);
  if (failure === undefined || !(thrown instanceof CalDavError)) return thrown;
  return new Error(`${failure.sentence} (${thrown.message})`);
}

export async function runDestinations(
  env: Env,
  action: DestinationsAction,
  io: { stdout: Stdout; stdin: PasswordInput },
): Promise<void> {
  const out = io.stdout;
  // Before anything is opened: a missing password is the command line's fault.
  const password =
    action.kind === 'add' || action.kind === 'credentials'
      ? await passwordOf(env, action.passwordStdin, io.stdin)
      : undefined;
  const config = loadConfig(env, ['database', 'log', 'vault', 'caldav']);
  const logger = createLoggerFor(config.log);
  const releasers = new Releasers();
  try {
    const destinations = openCommandDestinations(config, releasers, logger);
    switch (action.kind) {
      case 'list': {
        const list = await destinations.list(action.feedId === undefined ? {} : { feedId: action.feedId });
        // Ended destinations whose events are still being deleted from their calendars (or wait for new
        // credentials to be): an operator sees them beside the live ones.
        const leaving = (await destinations.cleanups()).filter(
          (c) => action.feedId === undefined || c.feedId === action.feedId,
        );
        if (action.format === 'json') {
          out.write(JSON.stringify({ destinations: list, leaving }, null, 2) + '\n');
          return;
        }
        const rows = list.map((d) => [
          d.id,
          d.feedId,
          d.calendarName,
          d.username,
          state(d),
          minute(d.lastPushAt),
          String(d.pendingChanges),
          d.lastError ?? '—',
        ]);
        out.write(
          formatTable(
            ['destination', 'feed', 'calendar', 'user', 'state', 'last push', 'pending', 'last error'],
            rows,
            'No CalDAV destinations.',
            { width: terminalWidth(out), keepWhole: [0, 1] },
          ),
        );
        if (leaving.length > 0) {
          out.write('\nCalendars being left (slotfeed deletes the events it wrote there):\n');
          out.write(
            formatTable(
              ['destination', 'calendar', 'user', 'state', 'events on record', 'last error'],
              leaving.map((c) => [
                c.id,
                c.calendarName,
                c.username,
                c.state === 'needs_credentials' ? 'needs new credentials' : 'deleting',
                String(c.events.length),
                c.lastError ?? '—',
              ]),
              '',
              { width: terminalWidth(out), keepWhole: [0] },
            ),
          );
        }
        return;
      }
      case 'add': {
        const added = await destinations.add({
          feedId: action.feedId,
          serverUrl: action.serverUrl,
          username: action.username,
          password: password!,
          ...(action.calendarName === undefined ? {} : { calendarName: action.calendarName }),
        });
        if (action.format === 'json') {
          out.write(JSON.stringify({ destination: added }, null, 2) + '\n');
          return;
        }
        const waitsFor = await destinations.cleanupAt(added.calendarUrl);
        out.write(
          waitsFor === null
            ? `${describe(added)}.\nThe server accepted the credentials; a worker writes the feed into the ` +
                'calendar within seconds (see `slotfeed destinations list`).\n'
            : `${describe(added)}.\nThe server accepted the credentials. ${waitingMessage(waitsFor)}.\n`,
        );
        return;
      }
      case 'remove': {
        const { eventsToDelete } = await destinations.remove(action.destinationId, {
          keepEvents: action.keepEvents,
        });
        out.write(
          action.keepEvents
            ? `CalDAV destination ${action.destinationId} removed; the events it wrote were left in the calendar.\n`
            : `CalDAV destination ${action.destinationId} removed. A worker deletes the ${eventsToDelete} event(s) it ` +
                'wrote from the calendar (and none of the person’s own); `slotfeed destinations list` shows it until done.\n',
        );
        return;
      }
      case 'credentials': {
        const username = action.username ?? (await destinations.get(action.destinationId)).username;
        const replaced = await destinations.replaceCredentials(action.destinationId, {
          username,
          password: password!,
        });
        out.write(`New credentials accepted by the server. ${describe(replaced)}.\n`);
        return;
      }
      case 'push':
        out.write(`Push asked for. ${describe(await destinations.pushNow(action.destinationId))}.\n`);
        return;
      case 'reconcile':
        out.write(
          `Reconciliation asked for. ${describe(await destinations.reconcileNow(action.destinationId))}.\n`,
        );
        return;
      case 'pause':
      case 'resume':
        out.write(
          `${describe(await destinations.setPaused(action.destinationId, action.kind === 'pause'))}.\n`,
        );
        return;
      case 'log': {
        await destinations.get(action.destinationId);
        const entries = await destinations.log(action.destinationId, action.limit);
        if (action.format === 'json') {
          out.write(JSON.stringify({ log: entries }, null, 2) + '\n');
          return;
        }
        out.write(
          formatTable(
            ['at', 'kind', 'event', 'message'],
            entries.map((e) => [minute(e.at), e.kind, e.uid ?? '—', e.message]),
            'No log entries.',
            { width: terminalWidth(out) },
          ),
        );
        return;
      }
    }
  } catch (thrown: unknown) {
    throw explained(thrown);
  } finally {
    await releasers.releaseAll(logger);
  }
}

export function registerDestinationsCommand(
  program: Command,
  env: Env,
  io: { stdout: Stdout; stdin: PasswordInput },
): void {
  const run = (action: DestinationsAction) => runDestinations(env, action, io);
  const destinations = program
    .command('destinations')
    .description(
      'CalDAV destinations: a feed written into a CalDAV calendar (list, add, remove, credentials, push, ' +
        'reconcile, pause, resume, log). Needs TOKEN_ENCRYPTION_KEY.',
    );
  const format = () =>
    new Option('--format <format>', 'output format').choices(OUTPUT_FORMATS).default('table');
  const destinationId = ['<destination-id>', 'the destination', uuidOf('CalDAV destination')] as const;

  destinations
    .command('list')
    .description('List destinations: state, last push, changes still to push, last error.')
    .addOption(new Option('--feed <feed-id>', 'only this feed’s').argParser(uuidOf('feed')))
    .addOption(format())
    .action(async (o: { feed?: string; format: OutputFormat }) =>
      run({ kind: 'list', ...(o.feed === undefined ? {} : { feedId: o.feed }), format: o.format }),
    );

  destinations
    .command('add')
    .description(
      'Write a feed into a CalDAV calendar: checks the credentials on the server, uses the calendar of that ' +
        'name or creates it, and a worker writes the feed into it.',
    )
    .argument('<feed-id>', 'the feed', uuidOf('feed'))
    .requiredOption('--server <url>', 'the CalDAV server’s address (or one calendar’s own address)')
    .requiredOption('--username <name>', 'the account’s user name')
    .option('--calendar <name>', `the calendar’s name (default "${DEFAULT_CALENDAR_NAME}")`)
    .option('--password-stdin', 'read the (app) password from stdin instead of ' + PASSWORD_ENV)
    .addOption(format())
    .addHelpText('after', `\n${PASSWORD_HELP}\n`)
    .action(
      async (
        feedId: string,
        o: {
          server: string;
          username: string;
          calendar?: string;
          passwordStdin?: boolean;
          format: OutputFormat;
        },
      ) =>
        run({
          kind: 'add',
          feedId,
          serverUrl: o.server,
          username: o.username,
          ...(o.calendar === undefined ? {} : { calendarName: o.calendar }),
          passwordStdin: o.passwordStdin ?? false,
          format: o.format,
        }),
    );

  destinations
    .command('remove')
    .description('Stop writing into the calendar and delete the events slotfeed wrote there.')
    .argument(...destinationId)
    .option('--keep-events', 'leave the events slotfeed wrote in the calendar')
    .action(async (id: string, o: { keepEvents?: boolean }) =>
      run({ kind: 'remove', destinationId: id, keepEvents: o.keepEvents ?? false }),
    );

  destinations
    .command('credentials')
    .description('Replace refused credentials: checked on the server first, then the destination is pushed.')
    .argument(...destinationId)
    .option('--username <name>', 'a new user name (default: the current one)')
    .option('--password-stdin', 'read the (app) password from stdin instead of ' + PASSWORD_ENV)
    .addHelpText('after', `\n${PASSWORD_HELP}\n`)
    .action(async (id: string, o: { username?: string; passwordStdin?: boolean }) =>
      run({
        kind: 'credentials',
        destinationId: id,
        ...(o.username === undefined ? {} : { username: o.username }),
        passwordStdin: o.passwordStdin ?? false,
      }),
    );

  for (const [kind, description] of [
    ['push', 'Push what changed now, out of any backoff.'],
    ['reconcile', 'Compare the calendar with the feed now and repair what differs.'],
    ['pause', 'Write nothing into the calendar until resumed.'],
    ['resume', 'Write into the calendar again, what changed meanwhile at once.'],
  ] as const) {
    destinations
      .command(kind)
      .description(description)
      .argument(...destinationId)
      .action(async (id: string) => run({ kind, destinationId: id }));
  }

  destinations
    .command('log')
    .description('What happened to a destination, newest first: pushes, repairs, failures.')
    .argument(...destinationId)
    .addOption(new Option('--limit <n>', 'how many entries').argParser(wholeNumber(1, 500)).default(50))
    .addOption(format())
    .action(async (id: string, o: { limit: number; format: OutputFormat }) =>
      run({ kind: 'log', destinationId: id, limit: o.limit, format: o.format }),
    );
}
