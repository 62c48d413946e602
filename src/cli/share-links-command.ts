// `slotfeed share-links list|create|revoke` (issue 37): links to a page of one feed's free time, for people who
// will never subscribe. A link's address is printed when it is made; it is kept as a hash and, when
// TOKEN_ENCRYPTION_KEY is given, sealed for its owner's page. PUBLIC_BASE_URL is the base of the printed address.
import { Option, type Command } from 'commander';
import { loadConfig } from '../config.js';
import { Releasers } from '../lib/releasers.js';
import { formatTable, terminalWidth } from '../lib/text-table.js';
import { createLoggerFor } from '../log.js';
import { openCommandDatabase } from '../composition/command-stores.js';
import {
  shareLinkExpiry,
  validFrameAncestor,
  validShareLabel,
  type ShareLinkRecord,
} from '../store/share-links.js';
import { shareUrlOf } from '../web/share-links-section.js';
import { OUTPUT_FORMATS, uuidOf, type OutputFormat } from './argument-parsers.js';
import type { Output } from './commands.js';
import { parsedBy } from './usage-error.js';

type Env = Record<string, string | undefined>;
type Stdout = Output & { isTTY: boolean; columns?: number };

export type ShareLinksAction =
  | { kind: 'list'; feedId?: string; activeOnly: boolean; format: OutputFormat }
  | { kind: 'create'; feedId: string; label: string; expires: string; embedOrigins: string[] }
  | { kind: 'revoke'; linkId: string };

const minute = (date: Date) => date.toISOString().replace(/:\d\d\.\d{3}Z$/, 'Z');

/** Whether the link's page opens now: neither it nor its feed revoked, and not expired. */
const opens = (link: ShareLinkRecord, now: Date) =>
  link.revokedAt === null && link.feedRevokedAt === null && (link.expiresAt === null || link.expiresAt > now);

function linkState(link: ShareLinkRecord, now: Date): string {
  if (link.revokedAt) return `revoked ${minute(link.revokedAt)}`;
  if (link.feedRevokedAt) return `feed revoked ${minute(link.feedRevokedAt)}`;
  if (link.expiresAt && link.expiresAt <= now) return `expired ${minute(link.expiresAt)}`;
  const opened = link.lastOpenedAt ? `opened ${minute(link.lastOpenedAt)}` : 'never opened';
  return link.expiresAt ? `${opened}; expires ${minute(link.expiresAt)}` : opened;
}

export async function runShareLinks(env: Env, action: ShareLinksAction, out: Stdout): Promise<void> {
  const sealing = action.kind === 'create' && env.TOKEN_ENCRYPTION_KEY;
  const config = loadConfig(env, sealing ? ['database', 'log', 'vault'] : ['database', 'log']);
  const linkBase =
    action.kind === 'create'
      ? loadConfig({ PUBLIC_BASE_URL: env.PUBLIC_BASE_URL }, ['web']).web.publicBaseUrl
      : '';
  const logger = createLoggerFor(config.log);
  const releasers = new Releasers();
  try {
    const { shareLinks } = openCommandDatabase(config, releasers, logger);
    const now = new Date();
    switch (action.kind) {
      case 'list': {
        const list = (
          await shareLinks.list({
            ...(action.feedId === undefined ? {} : { feedIds: [action.feedId] }),
            includeRevoked: !action.activeOnly,
          })
        ).filter((link) => !action.activeOnly || opens(link, now));
        if (action.format === 'json') {
          out.write(JSON.stringify({ shareLinks: list }, null, 2) + '\n');
          return;
        }
        const rows = list.map((l) => [l.id, l.feedId, l.label, minute(l.createdAt), linkState(l, now)]);
        out.write(
          formatTable(['link', 'feed', 'label', 'created', 'state'], rows, 'No share links.', {
            width: terminalWidth(out),
            keepWhole: [0, 1],
          }),
        );
        return;
      }
      case 'create': {
        const zone = await shareLinks.feedZone(action.feedId);
        const { link, secret } = await shareLinks.create({
          feedId: action.feedId,
          label: action.label,
          expiresAt: shareLinkExpiry(action.expires, zone, now),
          frameAncestors: action.embedOrigins,
          now,
        });
        out.write(
          `Share link ${link.id} (${link.label}; ${link.expiresAt ? `expires ${minute(link.expiresAt)}` : 'never expires'}):\n` +
            `  ${shareUrlOf(linkBase, secret)}\n`,
        );
        return;
      }
      case 'revoke': {
        const { revokedAt, alreadyRevoked } = await shareLinks.revoke(action.linkId, now);
        out.write(
          alreadyRevoked
            ? `Share link ${action.linkId} was already revoked on ${minute(revokedAt)}.\n`
            : `Share link ${action.linkId} revoked: its page answers 404 from now on.\n`,
        );
        return;
      }
    }
  } finally {
    await releasers.releaseAll(logger);
  }
}

export function registerShareLinksCommand(program: Command, env: Env, stdout: Stdout): void {
  const feedId = uuidOf('feed');
  const links = program
    .command('share-links')
    .description('Links to a page of a feed’s free time, for anyone: list, create, revoke.');
  links
    .command('list')
    .description('List share links (never their addresses), with when each was last opened.')
    .option('--feed <id>', 'only this feed’s', feedId)
    .option('--active', 'only links whose page opens now: not revoked, expired or of a revoked feed')
    .addOption(new Option('--format <format>', 'output format').choices(OUTPUT_FORMATS).default('table'))
    .action(async (o: { feed?: string; active?: boolean; format: OutputFormat }) =>
      runShareLinks(
        env,
        {
          kind: 'list',
          activeOnly: o.active === true,
          format: o.format,
          ...(o.feed ? { feedId: o.feed } : {}),
        },
        stdout,
      ),
    );
  links
    .command('create')
    .description('Make a share link of a feed (a person’s or a team’s) and print its address.')
    .addOption(new Option('--feed <id>', 'the feed').makeOptionMandatory().argParser(feedId))
    .addOption(
      new Option('--label <text>', 'who it is for')
        .makeOptionMandatory()
        .argParser(parsedBy(validShareLabel)),
    )
    .option(
      '--expires <when>',
      '"never", a number of days ("7d") or the last date it works (YYYY-MM-DD)',
      'never',
    )
    .option(
      '--embed-origin <origin>',
      'an origin whose pages may show it in an iframe (repeatable)',
      (value: string, previous: string[] = []) => [...previous, parsedBy(validFrameAncestor)(value)],
    )
    .action(async (o: { feed: string; label: string; expires: string; embedOrigin?: string[] }) =>
      runShareLinks(
        env,
        {
          kind: 'create',
          feedId: o.feed,
          label: o.label,
          expires: o.expires,
          embedOrigins: o.embedOrigin ?? [],
        },
        stdout,
      ),
    );
  links
    .command('revoke')
    .description('Revoke a share link: its page answers 404 from now on.')
    .argument('<link-id>', 'the link', uuidOf('share link'))
    .action(async (linkId: string) => runShareLinks(env, { kind: 'revoke', linkId }, stdout));
}
