// HTML of the owner's pages: "Your availability" (/me) with every feed's URL in each form calendar apps take,
// the actions an owner has (new feed, replace or revoke a URL, pause, leave a team, delete everything), and
// the pages around it (signed out, not connected, deleted). Every destructive form asks first (data-confirm).
// The feed cards, the teams section and the webhooks section have modules of their own (owner-*.ts).
import type { FastifyReply } from 'fastify';
import type { TeamRecord } from '../../store/teams.js';
import {
  CALDAV_NOTICES,
  caldavSection,
  OWNER_CALDAV_PATHS,
  type CaldavFormState,
  type DestinationView,
} from '../caldav/caldav-destinations-section.js';
import { html, type Raw, sendPage } from '../html.js';
import { CALDAV_CLEANUP_NOTICES, cleanupsSection } from '../caldav/caldav-cleanups-section.js';
import type { CaldavCleanupRecord } from '../../store/caldav-cleanups.js';
import { feedCard, newFeedForm, type OwnerFeed } from './owner-feed-cards.js';
import { shareLinksSection, type ShareLinkView } from '../share-links-section.js';
import { teamsSection } from './owner-teams-section.js';
import { webhooksSection, type OwnerWebhooks } from './owner-webhooks-section.js';
import { shownTime } from '../time-html.js';
import { postButton } from '../post-button.js';

export const OWNER_NOTICES: Record<string, string> = {
  connected: 'Connected. Your free time is now a calendar feed: subscribe to it below.',
  reconnected:
    'Access renewed. Your feed addresses are unchanged; calendars subscribed to them need nothing.',
  'signed-in': 'Signed in.',
  'feed-created': 'Feed created: its address is below.',
  rotated: 'Address replaced. The old one stopped working: subscribe again with the new one.',
  revoked: 'Feed revoked: its address no longer works.',
  paused: 'Syncing paused. Your feeds keep showing the last free time slotfeed saw, marked as not updated.',
  resumed: 'Syncing resumed; a sync is queued.',
  left: 'You left the team.',
  'webhook-deleted': 'Webhook endpoint deleted: nothing more is sent to it.',
  renamed: 'The feed’s name is changed; its address and what it shows are not.',
  'view-changed':
    'Changed what the feed shows. Its address is the same; calendars show the change at their next refresh.',
  ...CALDAV_NOTICES,
  ...CALDAV_CLEANUP_NOTICES,
  'share-created': 'Share link made: its address and QR code are below.',
  'share-revoked': 'Share link revoked: its page no longer opens.',
};

/** What an owner is told for a feed (or a share link) that is not theirs, revoked, or unknown. */
export const NOT_YOURS = 'No such feed on your account, or it is revoked.';

const OWNER_SHARE_PATHS = {
  create: (feedId: string) => `/me/feeds/${feedId}/share-links`,
  revoke: (linkId: string) => `/me/share-links/${linkId}/revoke`,
};

export interface OwnerHomeInput {
  connection: {
    id: string;
    displayName: string | null;
    email: string | null;
    timezone: string | null;
    status: 'active' | 'needs_reauth' | 'disabled';
    lastSyncAt: Date | null;
    lastSyncOutcome: string | null;
    lastGoodSyncAt: Date | null;
    nextSyncAt: Date;
  };
  feeds: OwnerFeed[];
  eventTypes: { id: string; title: string; enabled: boolean }[];
  teams: TeamRecord[];
  /** Each team's feeds, by team id: members subscribe to them here. */
  teamFeeds: Map<string, OwnerFeed[]>;
  /** The account's webhook endpoints. */
  webhooks: OwnerWebhooks;
  notice?: string;
  now: Date;
  /** PUBLIC_BASE_URL is this machine: cloud calendars cannot fetch from it. */
  loopback: boolean;
  /** The week preview, or an empty fragment when no feed's URL can be shown. */
  preview: Raw;
  /** The CalDAV destinations of the owner's feeds, by feed id. */
  caldav: Map<string, DestinationView[]>;
  /** Ended destinations whose events slotfeed still deletes from the owner's calendars. */
  cleanups: CaldavCleanupRecord[];
  /** The share links of the owner's feeds, by feed id. */
  shareLinks: Map<string, ShareLinkView[]>;
  /** A CalDAV form shown again after it failed (the page then answers `status`). */
  caldavForm?: CaldavFormState;
  /** 200 unless a form failed. */
  status?: number;
}

/** Where the owner's cleanup actions post. */
export const OWNER_CLEANUP_PATHS = { path: (id: string) => `/me/caldav-cleanups/${id}` };

/** How many calendars slotfeed writes into for the owner. */
const pushedCalendars = (input: Pick<OwnerHomeInput, 'caldav'>) =>
  [...input.caldav.values()].reduce((sum, views) => sum + views.length, 0);

const STATUS: Record<OwnerHomeInput['connection']['status'], { label: string; badge: string; help: string }> =
  {
    active: { label: 'Syncing', badge: 'ok', help: 'slotfeed checks Calendbook on a schedule.' },
    needs_reauth: {
      label: 'Needs you',
      badge: 'warn',
      help: 'Calendbook no longer accepts slotfeed’s access: connect again to renew it. Until then your feeds show the last free time seen.',
    },
    disabled: {
      label: 'Paused',
      badge: 'error',
      help: 'Syncing is paused. Your feeds keep showing the last free time seen, marked as not updated.',
    },
  };

export function ownerHomePage(reply: FastifyReply, input: OwnerHomeInput): FastifyReply {
  const { connection, now } = input;
  const zone = connection.timezone;
  const status = STATUS[connection.status];
  const name = connection.displayName ?? connection.email ?? 'your Calendbook account';
  return sendPage(reply, input.status ?? 200, {
    title: 'Your availability',
    nav: 'owner',
    body: html`<h1>Your availability</h1>
      ${input.notice ? html`<p class="notice" role="status" id="notice">${input.notice}</p>` : ''}
      <section class="card" id="status">
        <h2>${name}</h2>
        <dl class="facts">
          <dt>Status</dt>
          <dd><span class="badge ${status.badge}" id="connection-status">${status.label}</span></dd>
          <dt>Last checked</dt>
          <dd id="last-sync">
            ${shownTime(connection.lastSyncAt, zone, now, { lead: 'relative', none: 'never' })}
          </dd>
          <dt>Times shown in</dt>
          <dd>${zone ?? 'UTC (your Calendbook time zone arrives with the first sync)'}</dd>
        </dl>
        <p class="muted small">${status.help}</p>
        <div class="actions">
          ${
            connection.status === 'disabled'
              ? postButton('/me/resume', 'Resume syncing', { id: 'resume' })
              : postButton('/me/pause', 'Pause syncing', {
                  confirm: 'Pause syncing? Your feeds keep the free time seen so far until you resume.',
                  id: 'pause',
                })
          }
          ${connection.status === 'needs_reauth' ? html`<a class="button small primary" href="/connect">Connect again</a>` : ''}
        </div>
      </section>
      <h2>Your feeds</h2>
      <p class="muted">
        Anyone with a feed’s address sees your free time (never what you are doing). Keep the addresses
        private, and replace one if it was shared too widely.
      </p>
      ${
        input.feeds.length === 0
          ? html`<p class="muted" id="no-feeds">No feeds: make one below.</p>`
          : input.feeds.map((item) =>
              feedCard(item, {
                loopback: input.loopback,
                caldav: caldavSection({
                  feedId: item.feed.id,
                  title: 'Write into my calendar (CalDAV)',
                  destinations: input.caldav.get(item.feed.id) ?? [],
                  paths: OWNER_CALDAV_PATHS,
                  zone,
                  now,
                  form: input.caldavForm,
                }),
                shares: shareLinksSection({
                  feedId: item.feed.id,
                  links: input.shareLinks.get(item.feed.id) ?? [],
                  zone,
                  now,
                  paths: OWNER_SHARE_PATHS,
                }),
              }),
            )
      }
      ${cleanupsSection({ cleanups: input.cleanups, scope: OWNER_CLEANUP_PATHS, zone, now })}
      ${newFeedForm(input)} ${input.preview} ${teamsSection(input)} ${webhooksSection(input)}
      <section class="card" id="delete">
        <h2>Disconnect and delete</h2>
        <p>
          Removes your connection and everything slotfeed stored for it: snapshots, history, feeds (their
          addresses stop working) and Calendbook tokens. It cannot be undone.
        </p>
        ${
          pushedCalendars(input) > 0
            ? html`<p id="delete-caldav">
                slotfeed then deletes the free time it wrote into your calendars (${pushedCalendars(input)}
                written over CalDAV) and nothing else there: your own events stay. If a server refuses the
                stored password, the administrator sees it and the events stay until someone deletes them.
              </p>`
            : ''
        }
        ${postButton('/me/delete', 'Disconnect and delete my data', {
          confirm:
            'Delete everything slotfeed stored for your account? Your feed addresses stop working at once. This cannot be undone.',
          danger: true,
          id: 'delete-my-data',
        })}
      </section>`,
  });
}

export function signedOutPage(reply: FastifyReply, status: number, message?: string): FastifyReply {
  return sendPage(reply, status, {
    title: 'Your availability',
    body: html`<section class="card narrow">
      <h1>Your availability</h1>
      <p>${message ?? 'Sign in with your Calendbook account to see your feeds.'}</p>
      <div class="actions">
        <a class="button primary" id="sign-in" href="/signin">Sign in with Calendbook</a>
        <a class="button" href="/connect">Connect your Calendbook account</a>
      </div>
    </section>`,
  });
}

export function notConnectedPage(reply: FastifyReply, who: string | null): FastifyReply {
  return sendPage(reply, 200, {
    title: 'Not connected yet',
    body: html`<section class="card narrow" id="not-connected">
      <h1>Not connected yet</h1>
      <p>
        ${who ?? 'This Calendbook account'} is not connected to slotfeed, so there is no page to show. Nothing
        was stored.
      </p>
      <a class="button primary" href="/connect">Connect your Calendbook account</a>
    </section>`,
  });
}

export function deletedPage(reply: FastifyReply): FastifyReply {
  return sendPage(reply, 200, {
    title: 'Deleted',
    body: html`<section class="card narrow" id="deleted">
      <h1>Your data is deleted</h1>
      <p>
        Your connection, its history, its feeds and its Calendbook tokens are gone, and you are signed out on
        every device. Feed addresses you shared no longer work.
      </p>
      <p>
        Calendbook offers no way for slotfeed to withdraw the access you granted, so do it there: in your
        Calendbook account settings, under connected applications, remove slotfeed.
      </p>
      <a class="button" href="/">slotfeed home</a>
    </section>`,
  });
}
