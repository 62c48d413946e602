// What ended CalDAV destinations still have to do in people's calendars (issue 34): after a removal, or after a
// feed, connection or team was deleted, a worker deletes the events slotfeed wrote there. While it is under way,
// or when the server refused the stored credentials, the owner's page and the admin's pages say so, with what a
// person can do: give new credentials (checked on the server first), or leave the events where they are (the
// person deletes them, or keeps them). Each action is a POST form answered with 303 and a notice.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CaldavDestinations } from '../../destinations/caldav-destinations-service.js';
import type { CaldavCleanupRecord } from '../../store/caldav-cleanups.js';
import { caldavFailureOf } from './caldav-failure.js';
import { credentialFields } from './caldav-destinations-section.js';
import { field, seeOther } from '../form-replies.js';
import { html, type Raw } from '../html.js';
import { HttpError } from '../http-error.js';
import { postButton } from '../post-button.js';
import { shownTime } from '../time-html.js';

/** The notices the actions lead to (`?notice=…`). */
export const CALDAV_CLEANUP_NOTICES: Record<string, string> = {
  'caldav-cleanup-credentials':
    'New credentials accepted: slotfeed is deleting the events it wrote into that calendar now.',
  'caldav-cleanup-refused':
    'The server refused those credentials too: nothing changed. Check the user name and app password.',
  'caldav-cleanup-left':
    'slotfeed will not touch that calendar again; the events it wrote there stay as they are.',
};

export interface CleanupScope {
  /** "owner" or "admin", for the log line. */
  actor: string;
  /** Where a cleanup's forms post: `${path(id)}/credentials`, `${path(id)}/leave`. */
  path: (cleanupId: string) => string;
  /** Checks who acts; true when they may act on this cleanup (else it is a 404, as an unknown one). */
  mayManage(request: FastifyRequest, cleanup: CaldavCleanupRecord): Promise<boolean>;
  /** The page the actions lead back to. */
  page(request: FastifyRequest): string;
}

const anchor = 'caldav-cleanups';

/** The events it recorded writing; those it wrote unrecorded carry its proof and are found by it. */
const eventCount = (cleanup: CaldavCleanupRecord) =>
  cleanup.events.length === 1 ? '1 event on record' : `${cleanup.events.length} events on record`;

function cleanupItem(
  cleanup: CaldavCleanupRecord,
  scope: Pick<CleanupScope, 'path'>,
  zone: string | null,
  now: Date,
): Raw {
  const refused = cleanup.state === 'needs_credentials';
  const at = scope.path(cleanup.id);
  const id = `caldav-cleanup-${cleanup.id}`;
  return html`<li
    class="caldav-cleanup"
    id="${id}"
    data-cleanup-id="${cleanup.id}"
    data-state="${cleanup.state}"
  >
    <p class="caldav-destination-title">
      <strong>${cleanup.calendarName}</strong>
      <span class="badge ${refused ? 'warn' : ''}">${refused ? 'Needs new credentials' : 'Deleting'}</span>
    </p>
    <p class="muted small caldav-where">
      <span class="address">${cleanup.calendarUrl}</span> as ${cleanup.username}
    </p>
    <p class="small">
      ${cleanup.reason[0]?.toUpperCase()}${cleanup.reason.slice(1)}
      ${shownTime(cleanup.createdAt, zone, now, { lead: 'relative' })}.
      ${
        refused
          ? html`The server refused the stored credentials, so what slotfeed wrote there
            (${eventCount(cleanup)}) is still in the calendar and no longer updates. Give new credentials to
            delete it, or leave it there.`
          : html`slotfeed is deleting what it wrote there (${eventCount(cleanup)}), and nothing else.`
      }
    </p>
    ${cleanup.lastError ? html`<p class="small caldav-error">${cleanup.lastError}</p>` : ''}
    ${
      refused
        ? html`<form method="post" action="${at}/credentials">
            <div class="form-grid">${credentialFields(id, cleanup.username)}</div>
            <button type="submit" class="button small primary">Check and delete the events</button>
          </form>`
        : ''
    }
    <div class="actions">
      ${postButton(`${at}/leave`, 'Leave the events there', {
        confirm: `slotfeed will not touch ${cleanup.calendarName} again, and its events there stay as they are. Go on?`,
        attributes: html`data-action="leave"`,
      })}
    </div>
  </li>`;
}

/** The section, or nothing when no cleanup is left. */
export function cleanupsSection(input: {
  cleanups: CaldavCleanupRecord[];
  scope: Pick<CleanupScope, 'path'>;
  zone: string | null;
  now: Date;
}): Raw {
  if (input.cleanups.length === 0) return html``;
  return html`<section class="card" id="${anchor}">
    <h2>Leaving calendars</h2>
    <p class="muted">
      Calendars slotfeed no longer writes into, where it still has events of its own to delete.
    </p>
    <ul class="list-plain caldav-destinations">
      ${input.cleanups.map((cleanup) => cleanupItem(cleanup, input.scope, input.zone, input.now))}
    </ul>
  </section>`;
}

type IdParams = { Params: { id: string } };

export function registerCaldavCleanupActions(
  app: FastifyInstance,
  service: CaldavDestinations,
  scope: CleanupScope,
): void {
  const back = (request: FastifyRequest, notice: string) =>
    `${scope.page(request)}?notice=${notice}#${anchor}`;
  const own = async (request: FastifyRequest, id: string) => {
    const cleanup = await service.cleanup(id);
    if (cleanup === null || !(await scope.mayManage(request, cleanup)))
      throw new HttpError(404, 'No such calendar cleanup, or it is done already.');
    return cleanup;
  };

  app.post<IdParams>(`${scope.path(':id')}/credentials`, async (request, reply) => {
    const cleanup = await own(request, request.params.id);
    try {
      await service.replaceCleanupCredentials(cleanup.id, {
        username: field(request.body, 'username'),
        password: field(request.body, 'password'),
      });
    } catch (thrown: unknown) {
      if (caldavFailureOf(thrown) === undefined) throw thrown;
      return seeOther(reply, back(request, 'caldav-cleanup-refused'));
    }
    request.log.info({ caldavCleanupId: cleanup.id }, `${scope.actor} gave a CalDAV cleanup new credentials`);
    return seeOther(reply, back(request, 'caldav-cleanup-credentials'));
  });

  app.post<IdParams>(`${scope.path(':id')}/leave`, async (request, reply) => {
    const cleanup = await own(request, request.params.id);
    await service.abandonCleanup(cleanup.id);
    request.log.info(
      { caldavCleanupId: cleanup.id },
      `${scope.actor} left a CalDAV cleanup's events in the calendar`,
    );
    return seeOther(reply, back(request, 'caldav-cleanup-left'));
  });
}
