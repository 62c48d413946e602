// HTML of the admin's teams page (/admin/teams): each team with its members and its feeds, and the forms that
// create a team, add or remove a member, create a team feed and delete a team. Members are shown to the
// administrator with their e-mail address; team feeds themselves only ever name them by display name.
import { shareLinksSection, type ShareLinkView } from '../share-links-section.js';
import { ADMIN_SHARE_PATHS, SHARE_NOTICES } from './admin-pages.js';
import type { FastifyReply } from 'fastify';
import {
  DEFAULT_TEAM_MINIMUM_MINUTES,
  describeTeamFeedOptions,
  TEAM_MINIMUM_MAX_MINUTES,
  TEAM_MODES,
  type TeamMode,
} from '../../feeds/feed-options.js';
import type { FeedRecord } from '../../store/feeds.js';
import type { TeamRecord } from '../../store/teams.js';
import { html, sendPage, type Raw } from '../html.js';
import { statusBadge } from './admin-pages.js';
import { shownTime } from '../time-html.js';
import { daysAheadField, labelField } from './feed-form-fields.js';
import { postButton } from '../post-button.js';

export const ADMIN_TEAMS = '/admin/teams';

export const TEAM_NOTICES: Record<string, string> = {
  ...SHARE_NOTICES,
  'team-created': 'Team created. Add its members, then create its feed.',
  'member-added': 'Member added: the team’s feeds include their free time from now on.',
  'member-removed': 'Member removed from the team.',
  'not-a-member': 'Nothing changed: that connection was not a member.',
  'team-deleted': 'Team deleted, and its feeds with it: their URLs answer 404.',
  revoked: 'Feed revoked: its URL now answers 404.',
};

/** How a team mode reads on a page. */
export const TEAM_MODE_LABELS: Record<TeamMode, string> = {
  all: 'Everyone free (all members at once)',
  any: 'Who is free (at least one member, named)',
};

export interface AdminTeam {
  team: TeamRecord;
  /** Members' e-mail addresses, by connection id: for the administrator's eyes only. */
  emails: Map<string, string | null>;
  feeds: FeedRecord[];
  /** Each active team feed's share links, by feed id. */
  shares: Map<string, ShareLinkView[]>;
}

function feedRow(feed: FeedRecord, shares: readonly ShareLinkView[], now: Date): Raw {
  return html`<li data-feed-id="${feed.id}">
    <strong>${feed.label ?? 'Team feed'}</strong>
    <span class="muted small"
      >${describeTeamFeedOptions(feed.options)}; since ${shownTime(feed.createdAt, null, now)}</span
    >
    <div class="actions">
      ${postButton(`/admin/feeds/${feed.id}/rotate`, 'Rotate URL', {
        confirm:
          'Replace this feed’s URL? The old URL stops working at once: everyone subscribed must subscribe again.',
        attributes: html`data-action="rotate"`,
      })}
      ${postButton(`/admin/feeds/${feed.id}/revoke`, 'Revoke', {
        confirm: 'Revoke this feed? Its URL stops working for good.',
        danger: true,
        attributes: html`data-action="revoke"`,
      })}
    </div>
    ${
      feed.revokedAt === null
        ? shareLinksSection({ feedId: feed.id, links: shares, paths: ADMIN_SHARE_PATHS, zone: null, now })
        : ''
    }
  </li>`;
}

// A list rather than a table: on a phone a table's columns squeezed the names and e-mail addresses into
// pieces a few letters wide and pushed the Remove buttons out of sight into a sideways scroll. Each member's
// row wraps instead: who they are, then their status and the button, under it when the line is full.
function membersList({ team, emails }: AdminTeam): Raw {
  if (team.members.length === 0) return html`<p class="muted">No members yet.</p>`;
  return html`<ul class="member-list" aria-label="Members of ${team.name}">
    ${team.members.map(
      (m) =>
        html`<li data-connection-id="${m.connectionId}">
          <span class="member-who">
            <a href="/admin/connections/${m.connectionId}">${m.displayName ?? '(unnamed)'}</a>
            <span class="muted small address">${emails.get(m.connectionId) ?? ''}</span>
          </span>
          ${statusBadge(m.status)}
          ${postButton(`${ADMIN_TEAMS}/${team.id}/members/${m.connectionId}/remove`, 'Remove', {
            confirm: `Remove ${m.displayName ?? 'this member'} from ${team.name}?`,
            attributes: html`data-action="remove-member" aria-label="Remove ${m.displayName ?? 'this member'}"`,
          })}
        </li>`,
    )}
  </ul>`;
}

function addMemberForm(team: TeamRecord): Raw {
  const id = `member-${team.id}`;
  return html`<form method="post" action="${ADMIN_TEAMS}/${team.id}/members" class="inline-form">
    <div class="field">
      <label for="${id}">Add a member (connection e-mail or id)</label>
      <input id="${id}" name="connection" required maxlength="320" autocomplete="off" />
    </div>
    <button type="submit" class="button small">Add</button>
  </form>`;
}

function newTeamFeedForm(team: TeamRecord): Raw {
  const id = (name: string) => `${name}-${team.id}`;
  return html`<details>
    <summary>New team feed</summary>
    <form method="post" action="${ADMIN_TEAMS}/${team.id}/feeds">
      <div class="field">
        <label for="${id('mode')}">Shows</label>
        <select id="${id('mode')}" name="mode">
          ${TEAM_MODES.map((mode) => html`<option value="${mode}">${TEAM_MODE_LABELS[mode]}</option>`)}
        </select>
      </div>
      <div class="field">
        <label for="${id('minimum')}">Shortest time together, in minutes (everyone free)</label>
        <input
          id="${id('minimum')}"
          name="minimum"
          type="number"
          min="1"
          max="${TEAM_MINIMUM_MAX_MINUTES}"
          inputmode="numeric"
          placeholder="${DEFAULT_TEAM_MINIMUM_MINUTES}"
        />
      </div>
      ${daysAheadField(id('days'))}
      <div class="field">
        <label for="${id('summary')}">Blocks’ title</label>
        <input
          id="${id('summary')}"
          name="summary"
          maxlength="100"
          placeholder="Everyone free / 2 of 5 free"
        />
      </div>
      ${labelField(id('label'))}
      <button type="submit" class="button primary small">Create team feed</button>
    </form>
  </details>`;
}

function teamCard(entry: AdminTeam, now: Date): Raw {
  const { team, feeds } = entry;
  return html`<section class="card" data-team-id="${team.id}" aria-labelledby="team-${team.id}">
    <h2 id="team-${team.id}">${team.name}</h2>
    <p class="muted small">
      ${team.members.length} member${team.members.length === 1 ? '' : 's'}; created
      ${shownTime(team.createdAt, null, now)}
    </p>
    ${membersList(entry)} ${addMemberForm(team)}
    <h3>Feeds</h3>
    ${
      feeds.length === 0
        ? html`<p class="muted">No feeds yet.</p>`
        : html`<ul class="list-plain">
            ${feeds.map((f) => feedRow(f, entry.shares.get(f.id) ?? [], now))}
          </ul>`
    }
    ${newTeamFeedForm(team)}
    <div class="actions">
      ${postButton(`${ADMIN_TEAMS}/${team.id}/delete`, 'Delete team', {
        confirm: `Delete ${team.name}? Its feeds stop working for good; its members keep their own.`,
        danger: true,
        attributes: html`data-action="delete-team"`,
      })}
    </div>
  </section>`;
}

export function adminTeamsPage(
  reply: FastifyReply,
  input: { teams: AdminTeam[]; notice?: string; now: Date },
): FastifyReply {
  return sendPage(reply, 200, {
    title: 'Teams',
    nav: 'admin',
    body: html`<h1>Teams</h1>
      ${input.notice ? html`<p class="notice" role="status" id="notice">${input.notice}</p>` : ''}
      <p class="muted">
        A team’s feed shows when all its members are free, or who of them is. Members see their teams on their
        own page and may leave.
      </p>
      <form method="post" action="${ADMIN_TEAMS}" class="card inline-form" id="new-team">
        <div class="field">
          <label for="team-name">New team’s name</label>
          <input id="team-name" name="name" required maxlength="100" />
        </div>
        <button type="submit" class="button primary">Create team</button>
      </form>
      ${input.teams.length === 0 ? html`<p class="muted" id="no-teams">No teams yet.</p>` : input.teams.map((t) => teamCard(t, input.now))}`,
  });
}
