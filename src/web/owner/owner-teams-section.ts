// The owner's teams on "Your availability" (/me): who is in each, the team's feeds to subscribe to, and leaving.
import { describeTeamFeedOptions } from '../../feeds/feed-options.js';
import type { TeamRecord } from '../../store/teams.js';
import { html, type Raw } from '../html.js';
import { feedTitle, previewLink, subscribeBlock, type OwnerFeed } from './owner-feed-cards.js';
import { postButton } from '../post-button.js';

function teamFeedCard(item: OwnerFeed, input: { loopback: boolean }): Raw {
  return html`<div class="team-feed" data-feed-id="${item.feed.id}">
    <h4 id="feed-title-${item.feed.id}">${feedTitle(item)}</h4>
    <p class="muted small">${describeTeamFeedOptions(item.feed.options)}</p>
    ${subscribeBlock(item, input)}
    <div class="actions">${previewLink(item)}</div>
  </div>`;
}

export function teamsSection(input: {
  teams: TeamRecord[];
  teamFeeds: Map<string, OwnerFeed[]>;
  loopback: boolean;
}): Raw {
  const { teams } = input;
  if (teams.length === 0) return html``;
  return html`<section class="card" id="teams">
    <h2>Your teams</h2>
    <p class="muted small">
      A team’s feeds show when all of you are free, or who of you is. Anyone in the team may subscribe; an
      administrator makes and replaces them.
    </p>
    <ul class="list-plain">
      ${teams.map((team) => {
        const feeds = input.teamFeeds.get(team.id) ?? [];
        return html`<li data-team-id="${team.id}">
          <h3>${team.name}</h3>
          <p class="muted small">
            With ${team.members.map((m) => m.displayName ?? 'an unnamed member').join(', ')}
          </p>
          ${feeds.length === 0 ? html`<p class="muted small">No team feeds yet.</p>` : feeds.map((item) => teamFeedCard(item, input))}
          ${postButton(`/me/teams/${team.id}/leave`, 'Leave', {
            confirm: `Leave ${team.name}? Your free time stops counting in its feeds.`,
          })}
        </li>`;
      })}
    </ul>
  </section>`;
}
