// What the demo prints: a line per service as it comes up, and at the end everything needed to look at the
// system: the admin page and its token, each account's feed URLs, a curl command, the command line that runs
// the CLI against the demo, and the line `feeds ready`.
import { isLoopbackBaseUrl } from '../web/feed-links.js';
import { redactText } from '../log.js';
import type { FirstSyncRow } from './first-syncs.js';
import type { LocalPostgres } from './local-postgres.js';
import type { LocalRedis } from './local-redis.js';

export function describePostgres(postgres: LocalPostgres): string {
  const server = postgres.server;
  if (server === null) return `Postgres: DATABASE_URL (${redactText(postgres.url)}), migrated`;
  return (
    `Postgres: embedded (pid ${server.pid}, 127.0.0.1:${server.port}, data in ${server.dataDir}), ` +
    'database "slotfeed" migrated'
  );
}

export function describeRedis(redis: LocalRedis, prefix: string): string {
  const keys = `demo keys under "${prefix}:"`;
  switch (redis.source) {
    case 'env':
      return `Redis: REDIS_URL (${redactText(redis.url)}), ${keys}`;
    case 'default':
      return `Redis: ${redis.url} answers, ${keys}`;
    case 'started':
      return `Redis: redis-server started (pid ${redis.server?.pid ?? '?'}, ${redis.url}, no persistence)`;
  }
}

export interface DemoFeed {
  name: string;
  email: string;
  https: string;
  webcal: string;
  sync: FirstSyncRow | undefined;
  reconnected: boolean;
}

export interface DemoSummary {
  webUrl: string;
  adminToken: string;
  feeds: readonly DemoFeed[];
  /** Runs the CLI against this demo, e.g. `node --env-file=.slotfeed/demo.env dist/cli.js`. */
  cli: string;
}

function syncNote(feed: DemoFeed): string {
  const sync = feed.sync;
  if (sync === undefined || sync.state === 'waiting') return 'first sync still running';
  if (sync.state === 'synced') return `${sync.slots} free slots`;
  return `sync failed: ${sync.error ?? 'unknown error'}`;
}

/** Single quotes keep a shell from touching the URL; a quote inside it is closed, escaped and reopened. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

export function formatDemoSummary(summary: DemoSummary): string {
  const lines = [
    '',
    `Home page:   ${summary.webUrl}/  (owners sign in with Calendbook to their page, /me)`,
    `Admin page:  ${summary.webUrl}/admin`,
    `Admin token: ${summary.adminToken}`,
    '  (log in with it, or send "Authorization: Bearer <token>"; the queue dashboard is at /admin/queues)',
    '',
    'Feeds (keep these URLs private: anyone who has one sees the free slots):',
  ];
  if (isLoopbackBaseUrl(summary.webUrl)) {
    lines.push(
      '  (on this machine only: a calendar app here can subscribe, Google Calendar and Outlook cannot reach them)',
    );
  }
  for (const feed of summary.feeds) {
    lines.push(
      `  ${feed.name} <${feed.email}>: ${syncNote(feed)}${feed.reconnected ? ' (reconnected: new URL)' : ''}`,
    );
    lines.push(`    feed:   ${feed.https}`);
    lines.push(`    webcal: ${feed.webcal}`);
  }
  const first = summary.feeds[0];
  if (first !== undefined) {
    lines.push('', 'Fetch a feed:', `  curl -fsS ${shellQuote(first.https)}`);
  }
  lines.push(
    '',
    'Use the CLI with this demo (README, "Your first hour"):',
    `  ${summary.cli} connections list`,
  );
  lines.push('', 'feeds ready', 'slotfeed is running (scheduler, worker, web). Press Ctrl-C to stop.', '');
  return lines.join('\n');
}
