// `slotfeed feeds list|create|rotate|revoke`: a feed's URL is printed when it is created or rotated. Its token is
// stored hashed, and sealed by the token vault when TOKEN_ENCRYPTION_KEY is given, for /me to show it again; without
// the key, this is the only time it is shown. The commands read the database, and PUBLIC_BASE_URL when they print
// a link.
import { Option, type Command } from 'commander';
import { loadConfig } from '../config.js';
import {
  DEFAULT_FEED_VIEW,
  DEFAULT_FREE_SUMMARY,
  describeTeamFeedOptions,
  FEED_DAYS_MAX,
  FEED_VIEWS,
  VIEW_NAMES,
  viewOf,
  type FeedView,
  type TeamMode,
} from '../feeds/feed-options.js';
import { Releasers } from '../lib/releasers.js';
import { createLoggerFor } from '../log.js';
import { openCommandDatabase } from '../composition/command-stores.js';
import type { ConnectionAdminStore } from '../store/connection-admin.js';
import type { FeedRecord } from '../store/feeds.js';
import { feedLinksFor } from '../web/feed-links.js';
import { OUTPUT_FORMATS, uuidOf, wholeNumber, type OutputFormat } from './argument-parsers.js';
import { feedSummary, refuseOptionsIgnoredBy } from './feed-option-usage.js';
import type { Output } from './commands.js';
import { formatTable, terminalWidth } from '../lib/text-table.js';

type Env = Record<string, string | undefined>;
type Stdout = Output & { isTTY: boolean; columns?: number };

export type FeedsAction =
  | { kind: 'list'; connectionId?: string; includeRevoked: boolean; format: OutputFormat }
  | {
      kind: 'create';
      connectionId: string;
      eventId?: string;
      view: FeedView;
      days?: number;
      merge: boolean;
      summary?: string;
      label?: string;
    }
  | {
      kind: 'create-team';
      /** The team's id or exact name. */
      team: string;
      mode: TeamMode;
      minimum?: number;
      days?: number;
      summary?: string;
      label?: string;
    }
  | { kind: 'rotate'; feedId: string }
  | { kind: 'revoke'; feedId: string };

/**
 * The base of printed links, PUBLIC_BASE_URL. Validated through the web section on its own: the web role's
 * other settings (its port, admin token, rate limits) are none of a feeds command's business.
 */
function publicBaseUrl(env: Env): string {
  return loadConfig({ PUBLIC_BASE_URL: env.PUBLIC_BASE_URL }, ['web']).web.publicBaseUrl;
}

const minute = (date: Date) => date.toISOString().replace(/:\d\d\.\d{3}Z$/, 'Z');

function describeOptions(feed: FeedRecord): string {
  if (feed.teamId !== null) return `team: ${describeTeamFeedOptions(feed.options)}`;
  const view = viewOf(feed.options);
  const parts = [
    VIEW_NAMES[view],
    feed.upstreamEventId ? `event ${feed.upstreamEventId}` : 'all event types',
  ];
  if (feed.options.days) parts.push(`${feed.options.days} days`);
  if (feed.options.merge) parts.push('merged');
  if (feed.options.summary) parts.push(`"${feed.options.summary}"`);
  return parts.join(', ');
}

/**
 * Refuses an event id the connection does not have (a feed of it would stay empty), listing the ones it has;
 * as the admin page's form does. Disabled and secret event types may be named.
 */
async function requireEventType(
  connections: ConnectionAdminStore,
  connectionId: string,
  eventId: string,
): Promise<void> {
  const eventTypes = await connections.currentEventTypes(connectionId);
  if (eventTypes.some((e) => e.id === eventId)) return;
  if (eventTypes.length === 0) {
    throw new Error(
      `connection ${connectionId} has no event types yet: they arrive with its first sync ` +
        `(\`slotfeed sync ${connectionId} --wait\`).`,
    );
  }
  const width = Math.max(...eventTypes.map((e) => e.id.length));
  const listed = eventTypes.map((e) => {
    const notes = [...(e.enabled ? [] : ['disabled']), ...(e.secret ? ['secret'] : [])];
    return `  ${e.id.padEnd(width)}  ${e.title}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}`;
  });
  throw new Error(
    `connection ${connectionId} has no event type "${eventId}". Its event types:\n${listed.join('\n')}`,
  );
}

/** Options the feed's view or mode ignores are refused as bad usage, before anything is opened. */
function refuseIgnoredOptions(action: FeedsAction): void {
  if (action.kind === 'create') {
    refuseOptionsIgnoredBy(
      { view: action.view },
      { merge: action.merge ? true : undefined, summary: action.summary },
    );
  } else if (action.kind === 'create-team') {
    refuseOptionsIgnoredBy({ mode: action.mode }, { minimum: action.minimum, summary: action.summary });
  }
}

export async function runFeeds(env: Env, action: FeedsAction, out: Stdout): Promise<void> {
  refuseIgnoredOptions(action);
  const issuesToken = action.kind === 'create' || action.kind === 'create-team' || action.kind === 'rotate';
  // A new token is kept sealed for its owner's page when the vault's key is given (then it must be valid);
  // without it the owner's page offers to replace the URL. Listing and revoking never need it.
  const config = loadConfig(
    env,
    issuesToken && env.TOKEN_ENCRYPTION_KEY ? ['database', 'log', 'vault'] : ['database', 'log'],
  );
  const linkBase = issuesToken ? publicBaseUrl(env) : '';
  const logger = createLoggerFor(config.log);
  const releasers = new Releasers();
  try {
    const { connectionAdmin, feeds, feedNames, teams } = openCommandDatabase(config, releasers, logger);
    // Sealed in the vault, the token is shown again on /me (its owner's, or a team's members'), where the daemon has
    // the same key to open it; without the vault's key, never again.
    const shownAgain = 'vault' in config;
    const showLinks = async (feed: FeedRecord, token: string) => {
      const links = feedLinksFor(linkBase, token, await feedNames.calendarName(feed));
      const pages = feed.teamId === null ? 'its owner’s page, /me, shows' : 'its members’ pages, /me, show';
      const where = shownAgain
        ? `keep it secret (${pages} it again while the daemon has this TOKEN_ENCRYPTION_KEY)`
        : 'the URL is shown only now; keep it secret';
      out.write(
        `Feed ${feed.id} (${describeOptions(feed)}) — ${where}:\n` + `  ${links.https}\n  ${links.webcal}\n`,
      );
    };
    switch (action.kind) {
      case 'list': {
        const list = await feeds.list({
          ...(action.connectionId ? { connectionId: action.connectionId } : {}),
          includeRevoked: action.includeRevoked,
        });
        if (action.format === 'json') {
          out.write(JSON.stringify({ feeds: list }, null, 2) + '\n');
          return;
        }
        const rows = list.map((f) => [
          f.id,
          f.connectionId ?? `team ${f.teamId}`,
          describeOptions(f),
          minute(f.createdAt),
          f.revokedAt ? `revoked ${minute(f.revokedAt)}` : (f.label ?? ''),
        ]);
        out.write(
          formatTable(['feed', 'connection / team', 'shows', 'created', 'label / state'], rows, 'No feeds.', {
            width: terminalWidth(out),
            keepWhole: [0, 1],
          }),
        );
        return;
      }
      case 'create': {
        const eventId = action.eventId?.trim() || undefined;
        await connectionAdmin.require(action.connectionId);
        if (eventId !== undefined) await requireEventType(connectionAdmin, action.connectionId, eventId);
        const { feed, token } = await feeds.create({
          connectionId: action.connectionId,
          upstreamEventId: eventId ?? null,
          label: action.label ?? null,
          options: {
            view: action.view,
            ...(action.days ? { days: action.days } : {}),
            ...(action.merge ? { merge: true } : {}),
            ...(action.summary !== undefined ? { summary: action.summary } : {}),
          },
        });
        await showLinks(feed, token);
        return;
      }
      case 'create-team': {
        const team = await teams.find(action.team);
        const { feed, token } = await feeds.createTeamFeed({
          teamId: team.id,
          label: action.label ?? null,
          options: {
            mode: action.mode,
            ...(action.minimum !== undefined ? { minimum: action.minimum } : {}),
            ...(action.days ? { days: action.days } : {}),
            ...(action.summary !== undefined ? { summary: action.summary } : {}),
          },
        });
        await showLinks(feed, token);
        return;
      }
      case 'rotate': {
        const { feed, token } = await feeds.rotate(action.feedId);
        await showLinks(feed, token);
        out.write('The old URL no longer works.\n');
        return;
      }
      case 'revoke': {
        const { revokedAt, alreadyRevoked } = await feeds.revoke(action.feedId, new Date());
        out.write(
          alreadyRevoked
            ? `Feed ${action.feedId} was already revoked on ${minute(revokedAt)}; its URL answers 404.\n`
            : `Feed ${action.feedId} revoked; its URL now answers 404.\n`,
        );
        return;
      }
    }
  } finally {
    await releasers.releaseAll(logger);
  }
}

export function registerFeedsCommand(program: Command, env: Env, stdout: Stdout): void {
  const feeds = program.command('feeds').description('List, create, rotate and revoke .ics feeds.');
  feeds
    .command('list')
    .description(
      'List feeds (without their URLs: /me shows a sealed one again, or rotate a feed to get a new one).',
    )
    .addOption(
      new Option('--connection <id>', 'only this connection’s feeds').argParser(uuidOf('connection')),
    )
    .option('--revoked', 'include revoked feeds')
    .addOption(new Option('--format <format>', 'output format').choices(OUTPUT_FORMATS).default('table'))
    .action(async (o: { connection?: string; revoked?: boolean; format: OutputFormat }) =>
      runFeeds(
        env,
        {
          kind: 'list',
          connectionId: o.connection,
          includeRevoked: o.revoked ?? false,
          format: o.format,
        },
        stdout,
      ),
    );
  feeds
    .command('create')
    .description('Create a feed for a connection and print its URL.')
    .argument('<connection-id>', 'the connection', uuidOf('connection'))
    .option(
      '--event <event-id>',
      'only this event type (default: all; a secret one only this way; see `slotfeed connections show`)',
    )
    .addOption(
      new Option(
        '--view <view>',
        'free: blocks of free time; slots: one event per bookable slot; busy: inferred bookings as busy blocks; free+busy: both',
      )
        .choices(FEED_VIEWS)
        .default(DEFAULT_FEED_VIEW),
    )
    .addOption(new Option('--days <n>', 'days ahead to show').argParser(wholeNumber(1, FEED_DAYS_MAX)))
    .option('--merge', 'slots view: join adjacent or overlapping slots of one event type into one block')
    .addOption(
      new Option(
        '--summary <text>',
        `free view: the title of every block (default "${DEFAULT_FREE_SUMMARY}")`,
      ).argParser(feedSummary),
    )
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
    .argument('<feed-id>', 'the feed', uuidOf('feed'))
    .action(async (feedId: string) => runFeeds(env, { kind: 'rotate', feedId }, stdout));
  feeds
    .command('revoke')
    .description('Revoke a feed; its URL answers 404 from now on.')
    .argument('<feed-id>', 'the feed', uuidOf('feed'))
    .action(async (feedId: string) => runFeeds(env, { kind: 'revoke', feedId }, stdout));
}
