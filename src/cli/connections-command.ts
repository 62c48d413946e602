// `slotfeed connections list|show|disable|enable`: the operator's view of connected accounts, the same data
// and the same two status writes as the admin page (store/connection-admin.ts).
import type { Command } from 'commander';
import { Option } from 'commander';
import { loadConfig } from '../config.js';
import { personFeedTitle } from '../feeds/feed-title.js';
import { Releasers } from '../lib/releasers.js';
import { createLoggerFor } from '../log.js';
import { openCommandDatabase } from '../composition/command-stores.js';
import type { ConnectionAdminStore, ConnectionOverview } from '../store/connection-admin.js';
import { OUTPUT_FORMATS, uuidOf, type OutputFormat } from './argument-parsers.js';
import type { Output } from './commands.js';
import { formatTable, terminalWidth } from '../lib/text-table.js';

type Env = Record<string, string | undefined>;
type Stdout = Output & { isTTY: boolean; columns?: number };
type ConnectionsAction =
  | { kind: 'list'; format: OutputFormat }
  | { kind: 'show'; id: string; format: OutputFormat }
  | { kind: 'disable' | 'enable'; id: string };

const connectionId = uuidOf('connection');

const when = (date: Date | null) => (date === null ? '—' : date.toISOString().replace(/:\d\d\.\d{3}Z$/, 'Z'));

function lastSync(c: ConnectionOverview): string {
  return c.lastSyncOutcome === null ? 'never' : `${c.lastSyncOutcome} ${when(c.lastSyncAt)}`;
}

function describeConnection(c: ConnectionOverview): string {
  const lines = [
    `connection  ${c.id}`,
    `account     ${c.displayName ?? '—'} <${c.email ?? '—'}>`,
    `time zone   ${c.timezone ?? '— (not synced yet)'}`,
    `status      ${c.status}${c.status === 'needs_reauth' ? ' (the user must connect again)' : ''}`,
    `last sync   ${lastSync(c)}`,
    ...(c.lastSyncOutcome === 'failed' && c.lastSyncError ? [`last error  ${c.lastSyncError}`] : []),
    `last good   ${when(c.lastGoodSyncAt)}`,
    `next sync   ${c.status === 'active' ? when(c.nextSyncAt) : '— (not active)'}`,
    `open slots  ${c.openSlots}`,
    `event types ${c.eventTypes.length === 0 ? '—' : ''}`,
    ...c.eventTypes.map((e) => `  ${e.id}  ${e.title}${e.enabled ? '' : ' (disabled)'}`),
    `feeds       ${c.feeds.length === 0 ? '—' : ''}`,
    // Titled as /me titles them: two unnamed feeds of all event types told apart by what they show.
    ...c.feeds.map(
      (f) =>
        `  ${f.id}  ${personFeedTitle(f, new Map(c.eventTypes.map((e) => [e.id, e.title])))}  since ${when(f.createdAt)}`,
    ),
  ];
  return lines.join('\n') + '\n';
}

async function showConnection(store: ConnectionAdminStore, id: string): Promise<ConnectionOverview> {
  await store.require(id);
  const { connections } = await store.overviews({}, 100_000);
  const found = connections.find((c) => c.id === id);
  if (!found) throw new Error(`connection ${id} vanished while it was read`);
  return found;
}

export async function runConnections(env: Env, action: ConnectionsAction, out: Stdout, now = new Date()) {
  const config = loadConfig(env, ['database', 'log']);
  const logger = createLoggerFor(config.log);
  const releasers = new Releasers();
  try {
    const { connectionAdmin } = openCommandDatabase(config, releasers, logger);
    switch (action.kind) {
      case 'list': {
        const { connections, total } = await connectionAdmin.overviews();
        if (action.format === 'json') {
          out.write(JSON.stringify({ total, connections }, null, 2) + '\n');
          return;
        }
        const rows = connections.map((c) => [
          c.id,
          c.email ?? c.displayName ?? '—',
          c.status,
          lastSync(c),
          String(c.openSlots),
          String(c.feeds.length),
        ]);
        out.write(
          formatTable(
            ['connection', 'account', 'status', 'last sync', 'slots', 'feeds'],
            rows,
            'No connections yet: connect an account at PUBLIC_BASE_URL/connect.',
            { width: terminalWidth(out), keepWhole: [0] },
          ),
        );
        if (total > connections.length) out.write(`(showing ${connections.length} of ${total})\n`);
        return;
      }
      case 'show': {
        const connection = await showConnection(connectionAdmin, action.id);
        out.write(
          action.format === 'json'
            ? JSON.stringify(connection, null, 2) + '\n'
            : describeConnection(connection),
        );
        return;
      }
      case 'disable':
      case 'enable': {
        const { status } = await connectionAdmin.require(action.id);
        const changed = await connectionAdmin.setEnabled(action.id, action.kind === 'enable', now);
        out.write(
          changed
            ? action.kind === 'disable'
              ? `Connection ${action.id} disabled: no more syncs; its feeds keep serving the last snapshot.\n`
              : `Connection ${action.id} enabled: it syncs at the scheduler's next tick.\n`
            : `Nothing changed: connection ${action.id} is ${status}.\n`,
        );
        return;
      }
    }
  } finally {
    await releasers.releaseAll(logger);
  }
}

export function registerConnectionsCommand(program: Command, env: Env, stdout: Stdout): void {
  const connections = program
    .command('connections')
    .description('List connected accounts, show one, disable or enable its syncing.');
  const format = () =>
    new Option('--format <format>', 'output format').choices(OUTPUT_FORMATS).default('table');
  connections
    .command('list')
    .description('List connections with status, last sync, open slots and feeds.')
    .addOption(format())
    .action(async (o: { format: OutputFormat }) =>
      runConnections(env, { kind: 'list', format: o.format }, stdout),
    );
  connections
    .command('show')
    .description('Show one connection: account, zone, status, sync times, event types and feeds.')
    .argument('<connection-id>', 'the connection', connectionId)
    .addOption(format())
    .action(async (id: string, o: { format: OutputFormat }) =>
      runConnections(env, { kind: 'show', id, format: o.format }, stdout),
    );
  connections
    .command('disable')
    .description('Stop syncing a connection; its feeds keep serving the last snapshot.')
    .argument('<connection-id>', 'the connection', connectionId)
    .action(async (id: string) => runConnections(env, { kind: 'disable', id }, stdout));
  connections
    .command('enable')
    .description('Resume syncing a disabled connection (due at once).')
    .argument('<connection-id>', 'the connection', connectionId)
    .action(async (id: string) => runConnections(env, { kind: 'enable', id }, stdout));
}
