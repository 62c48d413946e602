// Connects a simulated account the way a person does in a browser: slotfeed's /connect redirects to
// Calendbook's sign-in, which the simulator approves at once for a login_hint it knows, and that redirects
// back to slotfeed's /oauth/callback, which signs the owner in and sends them to their page (/me), where the
// feed's URL is shown. Nothing is shortcut: state, PKCE, the code exchange and the first sync are the real ones.
import type { FeedStore } from '../store/feeds.js';
import type { SyncProgressStore } from '../store/sync-progress.js';

export interface DemoAccount {
  /** The simulator's user id: the `sub` of its tokens. */
  id: string;
  email: string;
  name: string;
}

export interface ConnectedAccount {
  account: DemoAccount;
  connectionId: string;
  feedToken: string;
  /** The account's feed had no URL that could be shown again (made before URLs were kept sealed): rotated. */
  reconnected: boolean;
}

export interface ConnectDeps {
  /** slotfeed's web origin, as browsers reach it. */
  webUrl: string;
  progress: Pick<SyncProgressStore, 'connectionOfAccount'>;
  feeds: FeedStore;
}

const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
};
const FEED_INPUT = /<input\b[^>]*\bid="feed-url-[^"]*"[^>]*\bvalue="([^"]*)"/;

/** The first feed token in an owner page's read-only feed URL fields, or null when it shows none. */
export function feedTokenInPage(html: string): string | null {
  const value = FEED_INPUT.exec(html)?.[1];
  if (value === undefined) return null;
  const decoded = value.replace(/&(amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity] ?? entity);
  const token = /\/feeds\/([^/]+)\.ics$/.exec(new URL(decoded).pathname)?.[1];
  return token === undefined ? null : decodeURIComponent(token);
}

/** Where a response redirects to. Messages never carry URLs: the callback's holds an authorization code. */
async function redirectTarget(url: string, what: string): Promise<string> {
  const response = await fetch(url, { redirect: 'manual', headers: { accept: 'text/html' } });
  await response.body?.cancel();
  const location = response.headers.get('location');
  if (response.status < 300 || response.status > 399 || location === null) {
    throw new Error(`${what} answered ${response.status} instead of a redirect`);
  }
  return new URL(location, url).toString();
}

export async function connectDemoAccount(deps: ConnectDeps, account: DemoAccount): Promise<ConnectedAccount> {
  const signIn = await redirectTarget(
    `${deps.webUrl}/connect?login_hint=${encodeURIComponent(account.email)}`,
    'slotfeed /connect',
  );
  const callback = await redirectTarget(signIn, 'Calendbook sign-in');
  const landed = await fetch(callback, { redirect: 'manual', headers: { accept: 'text/html' } });
  const location = landed.headers.get('location');
  const cookie = landed.headers.get('set-cookie')?.split(';')[0];
  const ownerPage =
    landed.status === 303 && location !== null && cookie !== undefined
      ? await fetch(new URL(location, callback), {
          redirect: 'manual',
          headers: { accept: 'text/html', cookie },
        })
      : landed;
  const page = ownerPage;
  const html = await page.text();
  if (page.status !== 200) {
    const text = html
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    throw new Error(
      `slotfeed /oauth/callback answered ${page.status} for ${account.email}: ${text.slice(0, 300)}`,
    );
  }
  const connectionId = await deps.progress.connectionOfAccount({
    upstreamUserId: account.id,
    email: account.email,
  });
  if (connectionId === undefined) throw new Error(`the callback stored no connection for ${account.email}`);
  const shown = feedTokenInPage(html);
  if (shown !== null) return { account, connectionId, feedToken: shown, reconnected: false };

  // A feed made before tokens were kept sealed exists only as a hash: a new token is the only URL the demo
  // can print. Calendars subscribed to the old URL must subscribe again.
  const ensured = await deps.feeds.ensureDefaultFeed(connectionId);
  const feedToken = ensured.token ?? (await deps.feeds.rotate(ensured.feed.id)).token;
  return { account, connectionId, feedToken, reconnected: true };
}
