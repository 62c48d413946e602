// The demo's CalDAV calendar (issue 29): when Radicale or Xandikos is installed, the demo starts one on loopback,
// its calendars in the data directory (so they survive a restart) and its user the demo's own (the password kept
// in demo.json), and writes the first account's free time into it through a CalDAV destination, as a person
// would add one on their page. It prints where a CalDAV client finds the calendar. When none is installed it
// says so in one line, with how to get one; when one fails to start, the demo goes on without it.
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CaldavDestinations } from '../destinations/caldav-destinations-service.js';
import type { Logger } from '../log.js';
import type { CaldavDestinationRecord } from '../store/caldav-destinations.js';
import type { FeedStore } from '../store/feeds.js';
import {
  findCalDavServer,
  startCalDavServer,
  type CalDavLauncher,
  type CalDavServerKind,
  type RunningCalDavServer,
} from './caldav-server-process.js';

/** The demo's user on its CalDAV server. */
export const DEMO_CALDAV_USER = 'demo';

const NAMES: Record<CalDavServerKind, string> = { radicale: 'Radicale', xandikos: 'Xandikos' };

export type LocalCalDav =
  | { state: 'started'; server: RunningCalDavServer; dir: string; username: string; password: string }
  | { state: 'none' }
  | { state: 'failed'; error: string };

export interface LocalCalDavInput {
  /** Where to look for radicale, xandikos and python3. */
  pathEnv: string | undefined;
  /** The server's configuration and calendars: a directory of the demo's data directory. */
  dir: string;
  username: string;
  password: string;
  logger: Pick<Logger, 'info' | 'warn'>;
  find?: (pathEnv: string | undefined) => Promise<CalDavLauncher | null>;
}

/** The port of the last run, so a CalDAV client's calendar URL stays the same; undefined when none is kept. */
async function recordedPort(file: string): Promise<number | undefined> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const port = Number(text.trim());
  return Number.isInteger(port) && port > 0 && port < 65_536 ? port : undefined;
}

async function recordPort(file: string, port: number): Promise<void> {
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, `${port}\n`);
  await rename(partial, file);
}

/** Finds and starts the server; never throws (the demo runs on without one). */
export async function resolveLocalCalDav(input: LocalCalDavInput): Promise<LocalCalDav> {
  try {
    const launcher = await (input.find ?? findCalDavServer)(input.pathEnv);
    if (launcher === null) return { state: 'none' };
    const portFile = path.join(input.dir, 'port');
    const server = await startCalDavServer({
      launcher,
      dir: input.dir,
      preferredPort: await recordedPort(portFile),
      username: input.username,
      password: input.password,
    });
    await recordPort(portFile, server.port);
    input.logger.info({ kind: server.kind, pid: server.pid, port: server.port }, 'started a CalDAV server');
    return { state: 'started', server, dir: input.dir, username: input.username, password: input.password };
  } catch (error: unknown) {
    const message = error instanceof Error ? error.message : String(error);
    input.logger.warn({ error: message }, 'the CalDAV server did not start; the demo goes on without it');
    return { state: 'failed', error: message };
  }
}

export const NO_CALDAV_SERVER =
  'CalDAV: no Radicale or Xandikos installed, so no calendar of your own to write free time into; ' +
  'to try it: sudo apt-get install radicale (or pip install radicale), then start the demo again';

/** The line printed once the server is up (or is not). */
export function describeLocalCalDav(local: LocalCalDav): string {
  switch (local.state) {
    case 'none':
      return NO_CALDAV_SERVER;
    case 'failed':
      return `CalDAV: ${local.error.split('\n')[0]}; the demo goes on without a calendar to write into`;
    case 'started': {
      const { server } = local;
      return `CalDAV: ${NAMES[server.kind]} started (pid ${server.pid}, ${server.baseUrl}, calendars in ${local.dir})`;
    }
  }
}

export interface DemoDestination {
  destination: CaldavDestinationRecord;
  /** added: new; kept: there from an earlier run; moved: re-added because the server's port changed. */
  outcome: 'added' | 'kept' | 'moved';
}

const originOf = (url: string) => new URL(url).origin;

/**
 * The feed's destination on the demo's server: the one an earlier run added (pushed again at once if it was
 * failing, given the demo's credentials again if they were refused), or a new one. One of an earlier run on
 * another port (the recorded port was taken) is removed, its events left in the calendar: the new one's first
 * push, a reconciliation, finds them by the feed's marker and adopts them, so nothing is written twice.
 */
export async function ensureDemoDestination(
  destinations: Pick<CaldavDestinations, 'list' | 'add' | 'remove' | 'pushNow' | 'replaceCredentials'>,
  input: { feedId: string; server: RunningCalDavServer; username: string; password: string },
): Promise<DemoDestination> {
  const demos = (await destinations.list({ feedId: input.feedId })).filter(
    (d) => d.username === input.username && new URL(d.serverUrl).hostname === '127.0.0.1',
  );
  const here = originOf(input.server.baseUrl);
  const current = demos.find((d) => originOf(d.calendarUrl) === here);
  if (current !== undefined) {
    const credentials = { username: input.username, password: input.password };
    if (current.state === 'needs_credentials')
      return { destination: await destinations.replaceCredentials(current.id, credentials), outcome: 'kept' };
    if (current.state === 'failing')
      return { destination: await destinations.pushNow(current.id), outcome: 'kept' };
    return { destination: current, outcome: 'kept' };
  }
  for (const stale of demos) await destinations.remove(stale.id, { keepEvents: true });
  const destination = await destinations.add({
    feedId: input.feedId,
    serverUrl: input.server.baseUrl,
    username: input.username,
    password: input.password,
  });
  return { destination, outcome: demos.length > 0 ? 'moved' : 'added' };
}

/** What the demo prints about the calendar, before `feeds ready`. */
export function describeDemoCalendar(input: {
  local: Extract<LocalCalDav, { state: 'started' }>;
  demo: DemoDestination;
  accountName: string;
  /** Runs the CLI against the demo. */
  cli: string;
}): string {
  const { server } = input.local;
  const { destination, outcome } = input.demo;
  const login = server.checksPasswords
    ? `user ${input.local.username}, password ${input.local.password}`
    : `any user name and password (${NAMES[server.kind]} checks none)`;
  const lines = [
    '',
    `${input.accountName}'s free time in a CalDAV calendar (${NAMES[server.kind]} on this machine), written ` +
      'within seconds of each sync:',
    `  calendar: ${destination.calendarUrl}`,
    `  server:   ${server.baseUrl}  (${login})`,
    '  Add it to a CalDAV client on this machine (Thunderbird, GNOME Calendar, Evolution) to watch it change;',
    `  its pushes: ${input.cli} destinations list`,
  ];
  if (outcome === 'moved') {
    lines.push(
      `  (port ${server.port} this time: the last run's was taken; a client given the old URL needs this one)`,
    );
  }
  return lines.join('\n');
}

export interface DemoCalendarInput {
  local: Extract<LocalCalDav, { state: 'started' }>;
  destinations: Parameters<typeof ensureDemoDestination>[0];
  feeds: Pick<FeedStore, 'ensureDefaultFeed'>;
  /** The first account: its default feed is written. */
  account: { name: string; connectionId: string };
  cli: string;
}

/**
 * Makes sure the first account's default feed is written into the demo's calendar; what to print about it.
 * Never throws: a calendar that cannot be added is said in one line, and the demo goes on.
 */
export async function setUpDemoCalendar(input: DemoCalendarInput): Promise<string> {
  try {
    const { feed } = await input.feeds.ensureDefaultFeed(input.account.connectionId);
    const demo = await ensureDemoDestination(input.destinations, {
      feedId: feed.id,
      server: input.local.server,
      username: input.local.username,
      password: input.local.password,
    });
    return describeDemoCalendar({
      local: input.local,
      demo,
      accountName: input.account.name,
      cli: input.cli,
    });
  } catch (error: unknown) {
    const message = error instanceof Error ? error.message : String(error);
    return `CalDAV: the demo's calendar could not be added as a destination (${message}); the demo goes on without it`;
  }
}
