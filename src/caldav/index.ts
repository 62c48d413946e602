// slotfeed's CalDAV client: a person's own calendar (iCloud, Fastmail, Nextcloud, Radicale, …) as a place to write a
// feed's free time. Open an account, find or make a calendar, and create, change, delete and list slotfeed's own
// events there, each change conditional on its ETag; the events slotfeed writes carry FEED_MARKER_PROPERTY. Every
// failure is one of the CalDavError types. On tsdav; knows nothing of Postgres, feeds or jobs.
export { openCalDavAccount, DEFAULT_CALDAV_TIMEOUT_MS } from './account.js';
export type {
  CalDavAccount,
  CalDavAccountOptions,
  CalDavCalendar,
  CalDavFeedEvent,
  CalDavStoredEvent,
} from './account.js';
export { EVENT_PROOF_PROPERTY, FEED_MARKER_PROPERTY, readEventIdentity } from './event-marker.js';
export type { EventIdentity } from './event-marker.js';
export {
  caldavErrorFor,
  CalDavError,
  CalDavCredentialsError,
  CalDavPreconditionError,
  CalDavUidConflictError,
  CalDavRetryLaterError,
  CalDavHeldBackError,
  CalDavNotFoundError,
  CalDavNotSupportedError,
  CalDavTimeoutError,
  CalDavUnreachableError,
  CalDavTargetError,
  CalDavRequestError,
} from './errors.js';
export type { CalDavErrorCode, CalDavFailedResponse, CalDavRequestInfo } from './errors.js';
export { PRIVATE_CALDAV_TARGET_REFUSED } from './target-policy.js';
