// The administrator's page for one connection: who it is and how its syncing goes (status, times in the
// account's zone), its recent runs with their errors, the upstream calls they made per endpoint, its feeds
// (never a token), its open slots over the last weeks as a chart, and its feeds' CalDAV destinations with their
// actions (caldav-destination-actions.ts). Its other actions are the list's own forms.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DateTime } from 'luxon';
import { VIEW_NAMES, viewOf } from '../../feeds/feed-options.js';
import { ConnectionNotFoundError } from '../../store/connections.js';
import type { RecentRun } from '../../store/connection-detail.js';
import { FeedNotFoundError, type FeedRecord } from '../../store/feeds.js';
import { describeInterval } from '../../feeds/describe-feed.js';
import { personFeedTitle } from '../../feeds/feed-title.js';
import { readBandState } from '../../sync/band-schedule.js';
import type { CadenceBand } from '../../config/sync-bands.js';
import { ADMIN_HOME, ADMIN_SHARE_PATHS, SHARE_NOTICES } from './admin-pages.js';
import { shareLinksSection, shareLinkViews, type ShareLinkView } from '../share-links-section.js';
import { ADMIN_TEAMS } from './admin-team-pages.js';
import { registerCaldavActions } from '../caldav/caldav-destination-actions.js';
import {
  ADMIN_CALDAV_PATHS,
  CALDAV_NOTICES,
  caldavSection,
  destinationViewsByFeed,
  type CaldavFormState,
  type DestinationView,
} from '../caldav/caldav-destinations-section.js';
import { field } from '../form-replies.js';
import { html, newScriptNonce, sendPage, type Raw } from '../html.js';
import { HttpError } from '../http-error.js';
import { lineChart } from './report-pages.js';
import { relativeTime } from '../time-format.js';
import { shownTime } from '../time-html.js';
import type { WebDeps } from '../web-deps.js';

export const CHART_DAYS = 28;
const DAY_SECONDS = 24 * 3600;

function duration(run: RecentRun): string {
  if (run.finishedAt === null) return '—';
  const ms = run.finishedAt.getTime() - run.startedAt.getTime();
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** When each cadence band is next due, nearest first: what "Next sync" is the earliest of. */
function bandTimes(stored: unknown, bands: readonly CadenceBand[], zone: string | null, now: Date): Raw {
  const state = readBandState(stored);
  return html`<dt>Bands</dt>
    <dd id="band-times">
      ${bands.map((band) => {
        const pulled = state[band.name];
        return html`<div class="small">
          <code>${band.name}</code> ${describeInterval(band.intervalSeconds * (pulled?.factor ?? 1))}, next
          ${pulled ? shownTime(new Date(pulled.dueAt), zone, now) : 'with the next sync (never pulled yet)'}
        </div>`;
      })}
    </dd>`;
}

const OUTCOME_BADGE: Record<string, string> = { succeeded: 'ok', failed: 'error' };

/** Runs a page lists: a connection synced every few minutes has thousands. */
export const RUNS_PER_PAGE = 10;
const RUNS_PAGE_PARAM = 'runs-page';

/** The page of runs asked for: 1 (the newest) unless the query names a later one. */
function runsPageOf(query: unknown): number {
  const asked = Number(field(query, RUNS_PAGE_PARAM));
  return Number.isInteger(asked) && asked > 1 ? asked : 1;
}

// One compact row per run, which wraps on a phone rather than scrolling sideways: when, how it went, what it
// cost and changed, and what the error was. A page of RUNS_PER_PAGE, newest first, with links to the others.
/** When a run started, short (the page says its zone above): "Mon 2 Mar, 09:50", the relative time on hover. */
function runTime(date: Date, zone: string | null, now: Date): Raw {
  const local = DateTime.fromJSDate(date, { zone: zone ?? 'UTC' });
  return html`<time datetime="${date.toISOString()}" title="${relativeTime(date, now)}"
    >${local.toFormat('ccc d LLL, HH:mm')}</time
  >`;
}

/** The bands a run pulled: "all bands" when it pulled every one (their names on hover), else their names. */
function bandsOf(run: RecentRun, allBands: readonly string[]): Raw | string {
  if (run.bands.length === 0) return '';
  const names = run.bands.join(', ');
  const every = allBands.length > 1 && allBands.every((band) => run.bands.includes(band));
  return every
    ? html`<span class="small muted" title="${names}">all bands</span>`
    : html`<span class="small muted">${names}</span>`;
}

function runsList(
  runs: RecentRun[],
  allBands: readonly string[],
  paging: { page: number; total: number; path: string },
  zone: string | null,
  now: Date,
): Raw {
  if (runs.length === 0) return html`<p class="muted" id="no-runs">No sync has run yet.</p>`;
  const { page, total, path } = paging;
  const pages = Math.max(1, Math.ceil(total / RUNS_PER_PAGE));
  const first = (page - 1) * RUNS_PER_PAGE + 1;
  const link = (to: number, label: string, rel: string) =>
    html`<a href="${to === 1 ? `${path}#runs` : `${path}?${RUNS_PAGE_PARAM}=${to}#runs`}" rel="${rel}"
      >${label}</a
    >`;
  return html`<ol class="card runs" id="runs">
      ${runs.map(
        (run) =>
          html`<li class="run" data-run-id="${run.id}">
            <span class="run-when">${runTime(run.startedAt, zone, now)}</span>
            <span class="badge ${OUTCOME_BADGE[run.outcome] ?? ''}">${run.outcome}</span>
            <span class="small run-figures"
              >${duration(run)} · ${run.upstreamCalls} calls · +${run.slotsOpened} −${run.slotsClosed}</span
            >
            ${bandsOf(run, allBands)} ${run.errorCode === null ? '' : html`<code>${run.errorCode}</code>`}
            ${run.errorMessage === null ? '' : html`<span class="small">${run.errorMessage.slice(0, 300)}</span>`}
          </li>`,
      )}
    </ol>
    <p class="small paging" id="runs-paging">
      Runs ${first}–${first + runs.length - 1} of ${total}
      ${page > 1 ? html` · ${link(page - 1, 'Newer', 'prev')}` : ''}
      ${page < pages ? html` · ${link(page + 1, 'Older', 'next')}` : ''}
    </p>`;
}

function callsTable(id: string, title: string, calls: { endpoint: string; calls: number }[]): Raw {
  return html`<section class="card" aria-labelledby="${id}-title">
    <h3 id="${id}-title">${title}</h3>
    ${
      calls.length === 0
        ? html`<p class="muted">None.</p>`
        : html`<table id="${id}">
            <tbody>
              ${calls.map(
                (c) =>
                  html`<tr>
                    <th scope="row"><code>${c.endpoint}</code></th>
                    <td class="num">${c.calls}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
  </section>`;
}

function feedsList(feeds: FeedRecord[], titles: Map<string, string>, zone: string | null, now: Date): Raw {
  if (feeds.length === 0) return html`<p class="muted">No feeds.</p>`;
  return html`<ul class="list-plain" id="feeds">
    ${feeds.map(
      (feed) =>
        html`<li data-feed-id="${feed.id}">
          <strong>${personFeedTitle(feed, titles)}</strong>
          <span class="badge ${feed.revokedAt === null ? 'ok' : 'error'}"
            >${feed.revokedAt === null ? 'active' : 'revoked'}</span
          >
          <span class="muted small">
            ${VIEW_NAMES[viewOf(feed.options)]};
            ${feed.upstreamEventId === null ? 'all event types' : (titles.get(feed.upstreamEventId) ?? feed.upstreamEventId)};
            ${feed.options.days === undefined ? 'default days' : `${feed.options.days} days`}; since
            ${shownTime(feed.createdAt, zone, now)}
          </span>
        </li>`,
    )}
  </ul>`;
}

function postButton(action: string, label: string, dataAction: string): Raw {
  return html`<form method="post" action="${action}">
    <button type="submit" class="button small" data-action="${dataAction}">${label}</button>
  </form>`;
}

/** The connection's active feeds, each with its CalDAV destinations and the form that adds one. */
function caldavFeeds(
  feeds: FeedRecord[],
  titles: Map<string, string>,
  destinations: Map<string, DestinationView[]>,
  input: { zone: string | null; now: Date; form?: CaldavFormState | undefined },
): Raw {
  const active = feeds.filter((feed) => feed.revokedAt === null);
  if (active.length === 0) return html`<p class="muted">No active feeds.</p>`;
  return html`${active.map(
    (feed) =>
      html`<section class="card" data-caldav-feed-id="${feed.id}" aria-labelledby="caldav-title-${feed.id}">
        <h3 id="caldav-title-${feed.id}">${personFeedTitle(feed, titles)}</h3>
        ${caldavSection({
          feedId: feed.id,
          title: 'Written into calendars (CalDAV)',
          destinations: destinations.get(feed.id) ?? [],
          paths: ADMIN_CALDAV_PATHS,
          ...input,
        })}
      </section>`,
  )}`;
}

/** The connection's active feeds, each with its share links and the form that makes one. */
function shareFeeds(
  feeds: FeedRecord[],
  titles: Map<string, string>,
  shares: Map<string, ShareLinkView[]>,
  input: { zone: string | null; now: Date },
): Raw {
  const active = feeds.filter((feed) => feed.revokedAt === null);
  if (active.length === 0) return html`<p class="muted">No active feeds.</p>`;
  return html`${active.map(
    (feed) =>
      html`<section class="card" data-share-feed-id="${feed.id}" aria-labelledby="share-title-${feed.id}">
        <h3 id="share-title-${feed.id}">${personFeedTitle(feed, titles)}</h3>
        ${shareLinksSection({
          feedId: feed.id,
          links: shares.get(feed.id) ?? [],
          paths: ADMIN_SHARE_PATHS,
          ...input,
        })}
      </section>`,
  )}`;
}

export const connectionPagePath = (connectionId: string) => `/admin/connections/${connectionId}`;

export function registerAdminConnectionPage(app: FastifyInstance, deps: WebDeps): void {
  /** The page; with `failed`, a CalDAV form that failed shown again as typed, answering `failed.status`. */
  async function showConnectionPage(
    request: FastifyRequest,
    reply: FastifyReply,
    connectionId: string,
    failed?: { status: number; form: CaldavFormState },
  ): Promise<FastifyReply> {
    let connection;
    try {
      // connectionAdmin.require first: it answers "not found" for an id that is not even a uuid.
      connection = await deps.connections.get((await deps.connectionAdmin.require(connectionId)).id);
    } catch (thrown: unknown) {
      if (thrown instanceof ConnectionNotFoundError) throw new HttpError(404, 'No such connection.');
      throw thrown;
    }
    const now = deps.now();
    const zone = connection.timezone;
    const runsPage = runsPageOf(request.query);
    const [runs, runCount, lastDay, lastWeek, openByDay, feeds, eventTypes, destinations] = await Promise.all(
      [
        deps.connectionDetail.recentRuns(connection.id, RUNS_PER_PAGE, (runsPage - 1) * RUNS_PER_PAGE),
        deps.connectionDetail.runCount(connection.id),
        deps.connectionDetail.callsByEndpointSince(
          connection.id,
          new Date(now.getTime() - DAY_SECONDS * 1000),
        ),
        deps.connectionDetail.callsByEndpointSince(
          connection.id,
          new Date(now.getTime() - 7 * DAY_SECONDS * 1000),
        ),
        deps.connectionDetail.openSlotsByDay(connection.id, now, CHART_DAYS),
        deps.feeds.list({ connectionId: connection.id, includeRevoked: true }),
        deps.connectionAdmin.currentEventTypes(connection.id),
        destinationViewsByFeed(deps.caldavDestinations, { connectionId: connection.id }),
      ],
    );
    const notice = { ...CALDAV_NOTICES, ...SHARE_NOTICES }[field(request.query, 'notice')];
    const shares = await shareLinkViews(
      deps.shareLinks,
      deps.settings.publicBaseUrl,
      feeds.filter((feed) => feed.revokedAt === null).map((feed) => feed.id),
    );
    const titles = new Map(eventTypes.map((e) => [e.id, e.title]));
    const nonce = newScriptNonce();
    const chart = {
      kind: 'line' as const,
      title: `Open slots, the last ${CHART_DAYS} days`,
      yLabel: 'open slots',
      x: openByDay.map((point) => Math.floor(point.at.getTime() / 1000)),
      y: openByDay.map((point) => point.open),
    };
    const name = connection.displayName ?? connection.email ?? connection.id;
    const status = connection.status;
    return sendPage(reply, failed?.status ?? 200, {
      title: name,
      nav: 'admin',
      scriptNonce: nonce,
      body: html`<p class="small"><a href="${ADMIN_HOME}">Connections</a> › ${name}</p>
        <h1>${name}</h1>
        ${notice ? html`<p class="notice" role="status" id="notice">${notice}</p>` : ''}
        <section class="card" id="account">
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <span
                class="badge ${status === 'active' ? 'ok' : status === 'needs_reauth' ? 'warn' : 'error'}"
                id="status"
                >${status === 'needs_reauth' ? 'needs re-authorisation' : status}</span
              >
            </dd>
            <dt>E-mail</dt>
            <dd>${connection.email ?? '—'}</dd>
            <dt>Calendbook id</dt>
            <dd><code>${connection.upstreamUserId}</code></dd>
            <dt>Connection id</dt>
            <dd><code>${connection.id}</code></dd>
            <dt>Time zone</dt>
            <dd>${zone ?? 'not known yet (UTC shown)'}</dd>
            <dt>Last sync</dt>
            <dd>${connection.lastSyncOutcome ?? 'never'} ${shownTime(connection.lastSyncAt, zone, now)}</dd>
            <dt>Last good sync</dt>
            <dd>${shownTime(connection.lastGoodSyncAt, zone, now)}</dd>
            <dt>Next sync</dt>
            <dd>${status === 'active' ? shownTime(connection.nextSyncAt, zone, now) : '— (not active)'}</dd>
            ${status === 'active' ? bandTimes(connection.bandState, deps.settings.syncBands, zone, now) : ''}
          </dl>
          <div class="actions">
            ${status === 'active' ? postButton(`/admin/connections/${connection.id}/sync`, 'Sync now', 'sync') : ''}
            ${
              status === 'disabled'
                ? postButton(`/admin/connections/${connection.id}/enable`, 'Enable', 'enable')
                : postButton(`/admin/connections/${connection.id}/disable`, 'Disable', 'disable')
            }
          </div>
        </section>
        <h2>Open slots over time</h2>
        <section class="card">${lineChart(chart, nonce)}</section>
        <h2>Upstream calls</h2>
        <div class="grid">
          ${callsTable('calls-day', 'Last 24 hours', lastDay)}
          ${callsTable('calls-week', 'Last 7 days', lastWeek)}
        </div>
        <h2>Recent sync runs</h2>
        ${runsList(
          runs,
          deps.settings.syncBands.map((band) => band.name),
          { page: runsPage, total: runCount, path: connectionPagePath(connection.id) },
          zone,
          now,
        )}
        <h2>Feeds</h2>
        <section class="card">${feedsList(feeds, titles, zone, now)}</section>
        <h2 id="share-links">Share links</h2>
        ${shareFeeds(feeds, titles, shares, { zone, now })}
        <h2 id="caldav">Written into calendars (CalDAV)</h2>
        ${caldavFeeds(feeds, titles, destinations, { zone, now, form: failed?.form })}`,
    });
  }

  app.get<{ Params: { id: string } }>('/admin/connections/:id', (request, reply) =>
    showConnectionPage(request, reply, request.params.id),
  );

  // The administrator manages every feed's destinations; a team feed's lead back to the teams page.
  registerCaldavActions(app, deps.caldavDestinations, {
    actor: 'admin',
    paths: ADMIN_CALDAV_PATHS,
    // The guard (admin-auth.ts requireAdmin) has checked the credential and the form's origin.
    acting: async () => ({
      async feedFor(feedId, forAdding) {
        const feed = await deps.feeds.get(feedId).catch((thrown: unknown) => {
          if (thrown instanceof FeedNotFoundError) throw new HttpError(404, 'No such feed.');
          throw thrown;
        });
        if (forAdding && feed.revokedAt !== null) throw new HttpError(404, 'No such feed, or it is revoked.');
        return feed;
      },
    }),
    pageOf: (feed) => (feed.connectionId === null ? ADMIN_TEAMS : connectionPagePath(feed.connectionId)),
    showAgain: async (request, reply, feed, status, form) => {
      if (feed.connectionId === null) throw new HttpError(status, form.error);
      return showConnectionPage(request, reply, feed.connectionId, { status, form });
    },
  });
}
