// `slotfeed teams list|create|add|remove|feed|delete`: the operator's side of teams (store/teams.ts). A team is
// named by its id or its exact name, whichever the operator has at hand.
import { Option, type Command } from 'commander';
import { loadConfig } from '../config.js';
import { Releasers } from '../lib/releasers.js';
import { formatTable, terminalWidth } from '../lib/text-table.js';
import { createLoggerFor } from '../log.js';
import { openCommandDatabase } from '../composition/command-stores.js';
import { validTeamName, type TeamRecord } from '../store/teams.js';
import {
  DEFAULT_TEAM_MINIMUM_MINUTES,
  DEFAULT_TEAM_MODE,
  FEED_DAYS_MAX,
  TEAM_MINIMUM_MAX_MINUTES,
  TEAM_MODES,
  type TeamMode,
} from '../feeds/feed-options.js';
import { OUTPUT_FORMATS, uuidOf, wholeNumber, type OutputFormat } from './argument-parsers.js';
import { runFeeds } from './feeds-command.js';
import { feedSummary } from './feed-option-usage.js';
import { parsedBy } from './usage-error.js';
import type { Output } from './commands.js';

type Env = Record<string, string | undefined>;
type Stdout = Output & { isTTY: boolean; columns?: number };

export type TeamsAction =
  | { kind: 'list'; format: OutputFormat }
  | { kind: 'create'; name: string; members: string[] }
  | { kind: 'add'; team: string; members: string[] }
  | { kind: 'remove'; team: string; member: string }
  | { kind: 'delete'; team: string };

const memberNames = (team: TeamRecord) =>
  team.members.length === 0
    ? '—'
    : team.members
        .map((m) => `${m.displayName ?? m.connectionId}${m.status === 'active' ? '' : ` (${m.status})`}`)
        .join(', ');

function describeTeam(team: TeamRecord): string {
  return `team ${team.name} (${team.id}): ${team.members.length} member${team.members.length === 1 ? '' : 's'}: ${memberNames(team)}\n`;
}

export async function runTeams(env: Env, action: TeamsAction, out: Stdout): Promise<void> {
  const config = loadConfig(env, ['database', 'log']);
  const logger = createLoggerFor(config.log);
  const releasers = new Releasers();
  try {
    const { teams } = openCommandDatabase(config, releasers, logger);
    switch (action.kind) {
      case 'list': {
        const all = await teams.list();
        if (action.format === 'json') {
          out.write(JSON.stringify({ teams: all }, null, 2) + '\n');
          return;
        }
        out.write(
          formatTable(
            ['team', 'name', 'members'],
            all.map((t) => [t.id, t.name, memberNames(t)]),
            'No teams yet: slotfeed teams create <name> [connection-id …]',
            { width: terminalWidth(out), keepWhole: [0] },
          ),
        );
        return;
      }
      case 'create': {
        const created = await teams.create(action.name);
        const team = action.members.length > 0 ? await teams.addMembers(created.id, action.members) : created;
        out.write(describeTeam(team));
        return;
      }
      case 'add': {
        const team = await teams.find(action.team);
        out.write(describeTeam(await teams.addMembers(team.id, action.members)));
        return;
      }
      case 'remove': {
        const team = await teams.find(action.team);
        const removed = await teams.removeMember(team.id, action.member);
        out.write(
          removed
            ? describeTeam(await teams.find(team.id))
            : `Nothing changed: connection ${action.member} is not a member of ${team.name}.\n`,
        );
        return;
      }
      case 'delete': {
        const team = await teams.find(action.team);
        await teams.delete(team.id);
        out.write(`Team ${team.name} deleted; its members' own feeds are unaffected.\n`);
        return;
      }
    }
  } finally {
    await releasers.releaseAll(logger);
  }
}

export function registerTeamsCommand(program: Command, env: Env, stdout: Stdout): void {
  const connectionId = uuidOf('connection');
  const teams = program
    .command('teams')
    .description(
      'Named sets of connections whose free time team feeds combine: list, create, add, remove, feed, delete.',
    );
  teams
    .command('list')
    .description('List teams and their members.')
    .addOption(new Option('--format <format>', 'output format').choices(OUTPUT_FORMATS).default('table'))
    .action(async (o: { format: OutputFormat }) => runTeams(env, { kind: 'list', format: o.format }, stdout));
  teams
    .command('create')
    .description('Create a team, with members if given.')
    .argument('<name>', 'the team’s name (shown in its feeds’ names)', parsedBy(validTeamName))
    .argument('[connection-ids...]', 'connections to add', (value: string, previous: string[] = []) => [
      ...previous,
      connectionId(value),
    ])
    .action(async (name: string, members: string[] | undefined) =>
      runTeams(env, { kind: 'create', name, members: members ?? [] }, stdout),
    );
  teams
    .command('add')
    .description('Add connections to a team.')
    .argument('<team>', 'the team’s id or name')
    .argument('<connection-ids...>', 'connections to add', (value: string, previous: string[] = []) => [
      ...previous,
      connectionId(value),
    ])
    .action(async (team: string, members: string[]) => runTeams(env, { kind: 'add', team, members }, stdout));
  teams
    .command('remove')
    .description('Take a connection out of a team.')
    .argument('<team>', 'the team’s id or name')
    .argument('<connection-id>', 'the member', connectionId)
    .action(async (team: string, member: string) => runTeams(env, { kind: 'remove', team, member }, stdout));
  teams
    .command('feed')
    .description('Create a feed of a team’s free time and print its URL.')
    .argument('<team>', 'the team’s id or name')
    .addOption(
      new Option('--mode <mode>', 'all: when every member is free; any: when someone is, naming who')
        .choices(TEAM_MODES)
        .default(DEFAULT_TEAM_MODE),
    )
    .addOption(
      new Option(
        '--minimum <minutes>',
        `mode all: the shortest time together shown (default ${DEFAULT_TEAM_MINIMUM_MINUTES})`,
      ).argParser(wholeNumber(1, TEAM_MINIMUM_MAX_MINUTES)),
    )
    .addOption(new Option('--days <n>', 'days ahead to show').argParser(wholeNumber(1, FEED_DAYS_MAX)))
    .addOption(new Option('--summary <text>', 'the title of every block').argParser(feedSummary))
    .option('--label <text>', 'a note for operators')
    .action(
      async (
        team: string,
        o: { mode: TeamMode; minimum?: number; days?: number; summary?: string; label?: string },
      ) => runFeeds(env, { kind: 'create-team', team, ...o }, stdout),
    );
  teams
    .command('delete')
    .description('Delete a team (its members and their own feeds stay).')
    .argument('<team>', 'the team’s id or name')
    .action(async (team: string) => runTeams(env, { kind: 'delete', team }, stdout));
}
