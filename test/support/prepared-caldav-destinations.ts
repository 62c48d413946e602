// CalDAV destinations in each state a page shows (active with a push and a log, failing, needing new credentials,
// paused, and one being left whose cleanup waits for new credentials), made through the store on a feed of the prepared site: no CalDAV server is needed to look at them. None
// is due for a push while the pages are looked at (the active one is pushed up to date, the failing one waits out
// its backoff, the others are never pushed), so the site's worker leaves them as they are.
import type { CaldavCleanupStore } from '../../src/store/caldav-cleanups.js';
import type { CaldavDestinationStore } from '../../src/store/caldav-destinations.js';

const SERVER = 'https://caldav.example.com/';
const calendar = (name: string) => `${SERVER}dav/calendars/user/ada@example.com/${name}/`;

export async function addDestinationsInEachState(
  store: CaldavDestinationStore,
  cleanups: CaldavCleanupStore,
  feedId: string,
  now: Date,
): Promise<void> {
  const add = (name: string, calendarName: string) =>
    store.create(
      {
        feedId,
        serverUrl: SERVER,
        calendarUrl: calendar(name),
        calendarName,
        credentials: { username: 'ada@example.com', password: 'app-password-for-slotfeed' },
      },
      now,
    );
  const active = await add('free-time', 'Free time (slotfeed)');
  await store.pushSucceeded(active.id, await store.claim(active.id, now), now, true);
  await store.log(
    active.id,
    [
      { kind: 'push', uid: null, message: 'wrote 12 events, changed 0, deleted 0' },
      {
        kind: 'repair-restored',
        uid: 'slotfeed-free-2026-03-03T10:00:00Z@example.com',
        message: 'edited in the calendar: written back',
      },
    ],
    now,
  );
  const failing = await add('work', 'Work');
  await store.pushFailed(
    failing.id,
    {
      state: 'failing',
      error: `PUT ${calendar('work')}slotfeed-free-2026-03-03T10:00:00Z.ics answered 507`,
      retryAt: new Date(now.getTime() + 24 * 3600_000),
    },
    now,
  );
  const refused = await add('family', 'Family');
  await store.pushFailed(
    refused.id,
    {
      state: 'needs_credentials',
      error: `PROPFIND ${calendar('family')} answered 401: the credentials were refused`,
      retryAt: null,
    },
    now,
  );
  const paused = await add('holidays', 'Holidays');
  await store.setPaused(paused.id, true, now);
  // A calendar being left whose server refused the stored credentials: its events wait for new ones.
  const left = await add('old-free-time', 'Old free time');
  await store.retire(left.id, { keepEvents: false, reason: 'the destination was removed', now });
  await cleanups.failed(left.id, {
    state: 'needs_credentials',
    error: `REPORT ${calendar('old-free-time')} answered 401: the credentials were refused`,
    retryAt: null,
  });
}
