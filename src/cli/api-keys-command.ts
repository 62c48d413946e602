// `slotfeed api-keys list|create|revoke`: keys for the JSON API (store/api-keys.ts). A key is printed once, at
// creation; only its hash is kept. Scopes name connections by id and teams by id or exact name.
import { Option, type Command } from 'commander';
import { loadConfig } from '../config.js';
import { Releasers } from '../lib/releasers.js';
import { formatTable, terminalWidth } from '../lib/text-table.js';
import { createLoggerFor } from '../log.js';
import { openCommandDatabase } from '../composition/command-stores.js';
import { validApiKeyLabel, type ApiKeyRecord } from '../store/api-keys.js';
import { OUTPUT_FORMATS, uuidOf, type OutputFormat } from './argument-parsers.js';
import { parsedBy, UsageError } from './usage-error.js';
import type { Output } from './commands.js';

type Env = Record<string, string | undefined>;
type Stdout = Output & { isTTY: boolean; columns?: number };

export type ApiKeysAction =
  | { kind: 'list'; format: OutputFormat; includeRevoked: boolean }
  | { kind: 'create'; label: string; connections: string[]; teams: string[] }
  | { kind: 'revoke'; keyId: string };

const minute = (date: Date) => date.toISOString().replace(/:\d\d\.\d{3}Z$/, 'Z');

/** What an operator deciding whether a key can go wants to know: is it revoked (when), or used (when last). */
function keyState(key: ApiKeyRecord): string {
  if (key.revokedAt) return `revoked ${minute(key.revokedAt)}`;
  return key.lastUsedAt ? `used ${minute(key.lastUsedAt)}` : 'never used';
}

export async function runApiKeys(env: Env, action: ApiKeysAction, out: Stdout): Promise<void> {
  const config = loadConfig(env, ['database', 'log']);
  const logger = createLoggerFor(config.log);
  const releasers = new Releasers();
  try {
    const { apiKeys: keys, teams } = openCommandDatabase(config, releasers, logger);
    switch (action.kind) {
      case 'list': {
        const list = await keys.list({ includeRevoked: action.includeRevoked });
        if (action.format === 'json') {
          out.write(JSON.stringify({ apiKeys: list }, null, 2) + '\n');
          return;
        }
        const rows = list.map((k) => [
          k.id,
          k.label,
          `${k.connectionIds.length} connection(s), ${k.teamIds.length} team(s)`,
          minute(k.createdAt),
          keyState(k),
        ]);
        out.write(
          formatTable(['key', 'label', 'scope', 'created', 'state'], rows, 'No API keys.', {
            width: terminalWidth(out),
            keepWhole: [0],
          }),
        );
        return;
      }
      case 'create': {
        const teamIds = await Promise.all(action.teams.map(async (team) => (await teams.find(team)).id));
        const { key, secret } = await keys.create({
          label: action.label,
          connectionIds: action.connections,
          teamIds,
        });
        out.write(
          `API key ${key.id} (${key.label}) — shown only now; keep it secret:\n  ${secret}\n` +
            `Use it as: Authorization: Bearer ${secret}\n`,
        );
        return;
      }
      case 'revoke': {
        const { revokedAt, alreadyRevoked } = await keys.revoke(action.keyId, new Date());
        out.write(
          alreadyRevoked
            ? `API key ${action.keyId} was already revoked on ${minute(revokedAt)}; requests with it get 401.\n`
            : `API key ${action.keyId} revoked; requests with it now get 401.\n`,
        );
        return;
      }
    }
  } finally {
    await releasers.releaseAll(logger);
  }
}

export function registerApiKeysCommand(program: Command, env: Env, stdout: Stdout): void {
  const connectionId = uuidOf('connection');
  const keys = program.command('api-keys').description('Keys for the JSON API: list, create, revoke.');
  keys
    .command('list')
    .description('List API keys (never the keys themselves), revoked ones too, with when each was last used.')
    .option('--active', 'leave revoked keys out')
    // Revoked keys used to be left out unless this was given; still accepted, so scripts that pass it work.
    .addOption(new Option('--revoked', 'include revoked keys (the default)').hideHelp().conflicts('active'))
    .addOption(new Option('--format <format>', 'output format').choices(OUTPUT_FORMATS).default('table'))
    .action(async (o: { format: OutputFormat; active?: boolean }) =>
      runApiKeys(env, { kind: 'list', format: o.format, includeRevoked: !o.active }, stdout),
    );
  keys
    .command('create')
    .description('Create a key scoped to connections and teams, and print it (shown only once).')
    .addOption(
      new Option('--label <text>', 'who uses it, for what')
        .makeOptionMandatory()
        .argParser(parsedBy(validApiKeyLabel)),
    )
    .option(
      '--connection <id>',
      'a connection it may read (repeatable)',
      (value: string, previous: string[] = []) => [...previous, connectionId(value)],
    )
    .option(
      '--team <team>',
      'a team it may read, by id or name (repeatable)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .action(async (o: { label: string; connection?: string[]; team?: string[] }) => {
      if (o.connection === undefined && o.team === undefined) {
        throw new UsageError(
          'give at least one --connection <id> or --team <team>: a key reads only what its scope names',
        );
      }
      await runApiKeys(
        env,
        { kind: 'create', label: o.label, connections: o.connection ?? [], teams: o.team ?? [] },
        stdout,
      );
    });
  keys
    .command('revoke')
    .description('Revoke a key: requests with it get 401 from now on.')
    .argument('<key-id>', 'the key', uuidOf('API key'))
    .action(async (keyId: string) => runApiKeys(env, { kind: 'revoke', keyId }, stdout));
}
