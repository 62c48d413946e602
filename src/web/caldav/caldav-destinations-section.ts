// A feed's CalDAV destinations as the owner's page (/me, on each feed card) and the admin's connection page show
// them: "Write into my calendar (CalDAV)". Each destination with its state, last push, last error, the changes
// still to push and its latest log entries, and its actions (push now, reconcile now, pause or resume, replace
// credentials, remove); below them the form that adds one. The password is never put back into a page: a form
// shown again after a failure keeps everything typed but it.
import {
  DEFAULT_CALENDAR_NAME,
  waitingMessage,
  type CaldavDestinations,
} from '../../destinations/caldav-destinations-service.js';
import type { CaldavCleanupRecord } from '../../store/caldav-cleanups.js';
import type { CaldavDestinationRecord, DestinationLogEntry } from '../../store/caldav-destinations.js';
import { html, type Raw } from '../html.js';
import { postButton } from '../post-button.js';
import { shownTime } from '../time-html.js';

/** A destination as the section shows it: the record, its latest log entries, and the cleanup it waits for. */
export interface DestinationView {
  destination: CaldavDestinationRecord;
  log: DestinationLogEntry[];
  /** An ended destination's cleanup still under way in the same calendar: nothing is written there until it ends. */
  waitsFor?: CaldavCleanupRecord | null;
}

/** How many log entries each destination shows (the CLI's `destinations log` shows more). */
export const DESTINATION_LOG_SHOWN = 8;

/** The destinations of a connection's (or team's) feeds with their latest log entries, by feed id. */
export async function destinationViewsByFeed(
  service: Pick<CaldavDestinations, 'list' | 'log' | 'cleanupAt'>,
  filter: { connectionId: string } | { teamId: string },
): Promise<Map<string, DestinationView[]>> {
  const byFeed = new Map<string, DestinationView[]>();
  for (const destination of await service.list(filter)) {
    const log = await service.log(destination.id, DESTINATION_LOG_SHOWN);
    const waitsFor = await service.cleanupAt(destination.calendarUrl);
    byFeed.set(destination.feedId, [
      ...(byFeed.get(destination.feedId) ?? []),
      { destination, log, waitsFor },
    ]);
  }
  return byFeed;
}

/** A form shown again after its action failed: what was typed (never the password) and why it failed. */
export type CaldavFormState =
  | {
      kind: 'add';
      feedId: string;
      serverUrl: string;
      username: string;
      calendarName: string;
      error: string;
    }
  | { kind: 'credentials'; destinationId: string; username: string; error: string };

/** Where a section's forms post: `${destinationsPath}/<id>/push` …, and the feed's add form. */
export interface CaldavPaths {
  add: (feedId: string) => string;
  destination: (destinationId: string) => string;
}

export const OWNER_CALDAV_PATHS: CaldavPaths = {
  add: (feedId) => `/me/feeds/${feedId}/caldav`,
  destination: (destinationId) => `/me/caldav/${destinationId}`,
};

export const ADMIN_CALDAV_PATHS: CaldavPaths = {
  add: (feedId) => `/admin/feeds/${feedId}/caldav`,
  destination: (destinationId) => `/admin/caldav/${destinationId}`,
};

/** The notices an action leads to (`?notice=…`), on either page. */
export const CALDAV_NOTICES: Record<string, string> = {
  'caldav-added':
    'Calendar added: slotfeed is writing this feed’s events into it now, and keeps them up to date.',
  'caldav-added-waiting':
    'Calendar added: slotfeed writes this feed’s events into it once it has deleted those of the destination ' +
    'removed from it (see "Leaving calendars").',
  'caldav-pushed': 'Push queued: the calendar gets what changed within seconds.',
  'caldav-reconciled':
    'Reconciliation queued: slotfeed compares the calendar with the feed and repairs what differs.',
  'caldav-paused': 'Paused: nothing is written into that calendar until you resume.',
  'caldav-resumed': 'Resumed: what changed meanwhile is being written now.',
  'caldav-credentials': 'New credentials accepted by the server; slotfeed writes into the calendar again.',
  'caldav-removed':
    'Calendar removed: slotfeed is deleting the events it wrote there (only those: your own events stay).',
  'caldav-removed-kept': 'Calendar removed; the events slotfeed wrote there were left as they are.',
};

/** Where an action on a feed's destinations leads back to on a page. */
export const caldavAnchor = (feedId: string) => `caldav-${feedId}`;

const STATES: Record<CaldavDestinationRecord['state'], { label: string; badge: string }> = {
  active: { label: 'Active', badge: 'ok' },
  needs_credentials: { label: 'Needs new credentials', badge: 'warn' },
  failing: { label: 'Failing', badge: 'error' },
  paused: { label: 'Paused', badge: '' },
};

/**
 * Why a form failed, where it failed: focused when the page loads (autofocus), so the page opens scrolled to it
 * and a screen reader reads it first, rather than at the top of a long page.
 */

/** The user name and app password fields of the add and replace forms; the password is never filled in. */
export function credentialFields(id: string, username: string, passwordHint?: string): Raw {
  return html`<div class="field">
      <label for="${id}-username">User name</label>
      <input
        id="${id}-username"
        name="username"
        required
        maxlength="300"
        autocomplete="off"
        value="${username}"
      />
    </div>
    <div class="field">
      <label for="${id}-password">App password</label>
      <input
        id="${id}-password"
        name="password"
        type="password"
        required
        maxlength="1000"
        autocomplete="new-password"
      />
      ${passwordHint ? html`<span class="hint">${passwordHint}</span>` : ''}
    </div>`;
}

function failureAlert(id: string, sentence: string): Raw {
  return html`<p class="error alert small" role="alert" id="${id}" tabindex="-1" autofocus>${sentence}</p>`;
}

function stateHelp(destination: CaldavDestinationRecord, zone: string | null, now: Date): Raw {
  switch (destination.state) {
    case 'needs_credentials':
      return html`<p class="warning small">
        The server refused the user name or password (changed, or the app password revoked). Nothing is
        written until you give new ones below.
      </p>`;
    case 'failing':
      return html`<p class="warning small">
        Writing into this calendar fails; slotfeed tries again
        ${destination.retryAt === null ? 'soon' : html`${shownTime(destination.retryAt, zone, now, { lead: 'relative' })}`}.
      </p>`;
    case 'paused':
      return html`<p class="muted small">Paused: nothing is written until it is resumed.</p>`;
    case 'active':
      return html``;
  }
}

function pending(destination: CaldavDestinationRecord, zone: string | null, now: Date): Raw {
  if (destination.pendingChanges === 0) return html`none`;
  const since =
    destination.pendingSince === null
      ? ''
      : html`, the oldest ${shownTime(destination.pendingSince, zone, now, { lead: 'relative' })}`;
  return html`${destination.pendingChanges}${since}`;
}

function logList(log: DestinationLogEntry[], zone: string | null, now: Date): Raw {
  if (log.length === 0) return html``;
  return html`<details class="caldav-log">
    <summary>Latest log entries</summary>
    <ul class="list-plain small">
      ${log.map(
        (entry) =>
          html`<li>
            ${shownTime(entry.at, zone, now, { lead: 'relative' })} <code>${entry.kind}</code>
            ${entry.message}
          </li>`,
      )}
    </ul>
  </details>`;
}

function credentialsForm(
  destination: CaldavDestinationRecord,
  paths: CaldavPaths,
  form: CaldavFormState | undefined,
): Raw {
  const failed = form?.kind === 'credentials' && form.destinationId === destination.id ? form : undefined;
  const id = `caldav-credentials-${destination.id}`;
  const open = failed !== undefined || destination.state === 'needs_credentials';
  return html`<details class="caldav-credentials" ${open ? 'open' : ''}>
    <summary>Replace credentials</summary>
    ${failed ? failureAlert(`${id}-error`, failed.error) : ''}
    <form method="post" action="${paths.destination(destination.id)}/credentials">
      <div class="form-grid">${credentialFields(id, failed?.username ?? destination.username)}</div>
      <button type="submit" class="button small primary">Check and replace</button>
    </form>
  </details>`;
}

function destinationItem(
  view: DestinationView,
  input: { paths: CaldavPaths; zone: string | null; now: Date; form?: CaldavFormState | undefined },
): Raw {
  const { destination } = view;
  const { paths, zone, now } = input;
  const state = STATES[destination.state];
  const at = paths.destination(destination.id);
  const pushable = destination.state === 'active' || destination.state === 'failing';
  return html`<li
    id="caldav-destination-${destination.id}"
    class="caldav-destination"
    data-destination-id="${destination.id}"
    data-state="${destination.state}"
  >
    <p class="caldav-destination-title">
      <strong>${destination.calendarName}</strong>
      <span class="badge ${state.badge}">${state.label}</span>
    </p>
    <p class="muted small caldav-where">
      <span class="address">${destination.calendarUrl}</span> as ${destination.username}
    </p>
    ${stateHelp(destination, zone, now)}
    ${view.waitsFor ? html`<p class="warning small caldav-waits">${waitingMessage(view.waitsFor)}.</p>` : ''}
    <dl class="facts small">
      <dt>Last push</dt>
      <dd>${shownTime(destination.lastPushAt, zone, now, { lead: 'relative', none: 'not yet' })}</dd>
      <dt>Changes to push</dt>
      <dd>${pending(destination, zone, now)}</dd>
      <dt>Last error</dt>
      <dd class="caldav-error">${destination.lastError ?? html`<span class="muted">none</span>`}</dd>
    </dl>
    ${logList(view.log, zone, now)}
    <div class="actions">
      ${pushable ? postButton(`${at}/push`, 'Push now', { attributes: html`data-action="push"` }) : ''}
      ${pushable ? postButton(`${at}/reconcile`, 'Reconcile now', { attributes: html`data-action="reconcile"` }) : ''}
      ${
        destination.state === 'paused'
          ? postButton(`${at}/resume`, 'Resume', { attributes: html`data-action="resume"` })
          : postButton(`${at}/pause`, 'Pause', { attributes: html`data-action="pause"` })
      }
    </div>
    ${credentialsForm(destination, paths, input.form)}
    <form
      method="post"
      action="${at}/remove"
      class="caldav-remove"
      data-confirm="Stop writing into ${destination.calendarName}?"
    >
      <div class="field check">
        <input
          type="checkbox"
          id="caldav-delete-events-${destination.id}"
          name="deleteEvents"
          value="true"
          checked
        />
        <label for="caldav-delete-events-${destination.id}"
          >Also delete the events slotfeed wrote there</label
        >
      </div>
      <button type="submit" class="button small danger" data-action="remove">Remove</button>
    </form>
  </li>`;
}

function addForm(input: {
  feedId: string;
  paths: CaldavPaths;
  failed: Extract<CaldavFormState, { kind: 'add' }> | undefined;
}): Raw {
  const { feedId, failed } = input;
  const id = `caldav-add-${feedId}`;
  return html`<form method="post" action="${input.paths.add(feedId)}" class="caldav-add" id="${id}">
    <h4>Add a calendar</h4>
    ${failed ? failureAlert(`${id}-error`, failed.error) : ''}
    <div class="form-grid">
      <div class="field">
        <label for="${id}-server">Server address</label>
        <input
          id="${id}-server"
          name="serverUrl"
          type="url"
          required
          maxlength="2000"
          placeholder="https://caldav.example.com/"
          value="${failed?.serverUrl ?? ''}"
        />
        <span class="hint">Your provider’s CalDAV address, or one calendar’s own address.</span>
      </div>
      ${credentialFields(id, failed?.username ?? '', 'Kept encrypted, never shown again.')}
      <div class="field">
        <label for="${id}-calendar">Calendar name</label>
        <input
          id="${id}-calendar"
          name="calendarName"
          maxlength="200"
          placeholder="${DEFAULT_CALENDAR_NAME}"
          value="${failed?.calendarName ?? ''}"
        />
        <span class="hint">Used if the server has it, else created. Empty: “${DEFAULT_CALENDAR_NAME}”.</span>
      </div>
    </div>
    <button type="submit" class="button small primary">Check and add</button>
  </form>`;
}

/** The section for one feed: its destinations and the form that adds one. */
export function caldavSection(input: {
  feedId: string;
  /** The section's summary: "Write into my calendar (CalDAV)" for its owner. */
  title: string;
  destinations: DestinationView[];
  paths: CaldavPaths;
  zone: string | null;
  now: Date;
  /** A form of this page shown again after a failure (it may be another feed's). */
  form?: CaldavFormState | undefined;
}): Raw {
  const { feedId, destinations, form } = input;
  const failedAdd = form?.kind === 'add' && form.feedId === feedId ? form : undefined;
  const ours = destinations.some(
    (view) => form !== undefined && form.kind !== 'add' && view.destination.id === form.destinationId,
  );
  const open = destinations.length > 0 || failedAdd !== undefined || ours;
  return html`<details class="caldav" id="${caldavAnchor(feedId)}" ${open ? 'open' : ''}>
    <summary>
      ${input.title}${destinations.length === 0 ? '' : html` <span class="badge">${destinations.length}</span>`}
    </summary>
    <p class="muted small">
      slotfeed writes this feed’s events into a CalDAV calendar (iCloud, Fastmail, Nextcloud, mailbox.org,
      Posteo …) within seconds of each change, so every device that calendar syncs to shows them. It touches
      only the events it wrote there; give it an app password made for it.
    </p>
    ${
      destinations.length === 0
        ? ''
        : html`<ul class="list-plain caldav-destinations">
            ${destinations.map((view) => destinationItem(view, { ...input, form }))}
          </ul>`
    }
    ${addForm({ feedId, paths: input.paths, failed: failedAdd })}
  </details>`;
}
