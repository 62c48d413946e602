// Every page of the site, declared once: the in-browser checks (test/web/pages-in-browser.test.ts) and the
// screenshot script (scripts/screenshots.ts) both walk this list, so a new page is one entry here and is then
// both checked and photographed.
import { REPORT_NAMES } from '../../src/reports/report-query.js';

/** Who looks at a page: nobody signed in, the owner of a connected account, or the administrator. */
export type Viewer = 'public' | 'owner' | 'admin';

/** What a prepared site (prepared-site.ts) knows, for building a page's path. */
export interface SiteFacts {
  /** The connected account the owner signs in as, synced so its pages have data. */
  connectionId: string;
  /** That account's feed token (shown once, on its connect result page). */
  feedToken: string;
  /** The feed of a team the owner is in. */
  teamFeedId: string;
  /** The secret of a share link of the owner's feed that never expires, and of one that has expired. */
  shareSecret: string;
  expiredShareSecret: string;
  /**
   * A fresh, unspent sign-in callback path (`/oauth/callback?code=…&state=…`) for an account never connected:
   * the callback spends its state, so every visit of the "not connected" page needs one of its own.
   */
  newSignInCallbackPath(): Promise<string>;
  /**
   * The simulated Calendbook's sign-in and consent page, as /connect sends a visitor there: a whole URL, on the
   * simulator's own origin.
   */
  consentPageUrl(): Promise<string>;
}

export interface SitePage {
  /** Kebab-case; the screenshots are docs/screenshots/<name>-desktop.png and <name>-phone.png. */
  name: string;
  viewer: Viewer;
  /** A path on the site, or a whole URL for a page another server shows (the simulator's consent page). */
  path(site: SiteFacts): string | Promise<string>;
  /** The status the page answers with; any 2xx when absent. */
  status?: number;
  /** A selector present once the page has finished drawing (client-side rendering, polling). */
  readyWhen?: string;
  /**
   * A state reached by sending one of the page's forms (a failed form shown again): the form's selector (the
   * first match) and its fields by name. The page checked is the answer to it. The form is sent as its button
   * would send it (constraint validation included), also when folded away in a <details>.
   */
  submit?: { form: string; fields: Record<string, string> };
  /**
   * Another project's page we serve but do not write (Bull Board): the axe rules it is known to break. The
   * check then fails on any other rule, so a new problem, or one of ours in its frame, still shows.
   */
  knownAxeViolations?: readonly string[];
}

/** A CalDAV server on a private address: refused before any request, so no server is needed to see it. */
const REFUSED_CALDAV_FORM = {
  serverUrl: 'http://192.168.1.20:5232/',
  username: 'ada@example.com',
  password: 'app-password-for-slotfeed',
  calendarName: 'Free time at work',
};

/** The administrator's home; moving it is this one edit. */
export const ADMIN_HOME = '/admin';

export const SITE_PAGES: readonly SitePage[] = [
  { name: 'landing', viewer: 'public', path: () => '/' },
  { name: 'admin-sign-in', viewer: 'public', path: () => '/admin/login' },
  { name: 'admin-home', viewer: 'admin', path: () => ADMIN_HOME },
  {
    name: 'admin-connection',
    viewer: 'admin',
    path: (site) => `/admin/connections/${site.connectionId}`,
    readyWhen: '#chart[data-ready="true"]',
  },
  // A CalDAV destination refused (the prepared site allows no private CalDAV server): the form shown again with
  // the reason, on a page that also lists destinations in every state.
  {
    name: 'admin-connection-caldav-refused',
    viewer: 'admin',
    path: (site) => `/admin/connections/${site.connectionId}`,
    readyWhen: '#chart[data-ready="true"]',
    submit: { form: 'form.caldav-add', fields: REFUSED_CALDAV_FORM },
    status: 400,
  },
  { name: 'admin-teams', viewer: 'admin', path: () => '/admin/teams' },
  { name: 'admin-api', viewer: 'admin', path: () => '/admin/api' },
  // Swagger UI draws the reference from /api/openapi.json in the browser.
  { name: 'api-reference', viewer: 'public', path: () => '/api/docs/', readyWhen: '.opblock' },
  { name: 'reports', viewer: 'admin', path: () => '/admin/reports' },
  ...REPORT_NAMES.map((report): SitePage => ({
    name: `report-${report}`,
    viewer: 'admin',
    path: () => `/admin/reports/${report}`,
  })),
  // Bull Board draws itself in the browser: its queue list is what "ready" looks like.
  {
    name: 'queue-dashboard',
    viewer: 'admin',
    path: () => '/admin/queues',
    readyWhen: 'text=sync',
    // Bull Board's own markup (@bull-board/ui): icon-only buttons, an unlabelled logo, its badge colours.
    knownAxeViolations: ['button-name', 'color-contrast', 'label-content-name-mismatch', 'svg-img-alt'],
  },
  // The owner's page draws its week preview from the feed in the browser: ready once FullCalendar has read it.
  { name: 'owner-home', viewer: 'owner', path: () => '/me', readyWhen: '#week-preview[data-ready="true"]' },
  {
    name: 'owner-team-preview',
    viewer: 'owner',
    path: (site) => `/me?preview=${site.teamFeedId}`,
    readyWhen: '#week-preview[data-ready="true"]',
  },
  {
    name: 'owner-caldav-refused',
    viewer: 'owner',
    path: () => '/me',
    readyWhen: '#week-preview[data-ready="true"]',
    submit: { form: 'form.caldav-add', fields: REFUSED_CALDAV_FORM },
    status: 400,
  },
  { name: 'owner-signed-out', viewer: 'public', path: () => '/me' },
  { name: 'owner-not-connected', viewer: 'public', path: (site) => site.newSignInCallbackPath() },
  { name: 'owner-deleted', viewer: 'public', path: () => '/deleted' },
  {
    name: 'error-unknown-sign-in',
    viewer: 'public',
    path: () => '/oauth/callback?state=not-a-state-we-issued&code=whatever',
    status: 400,
  },
  // The share page, shown to anyone with the link: in the browser's zone once its script has run.
  { name: 'share', viewer: 'public', path: (site) => `/share/${site.shareSecret}`, readyWhen: '.share-days' },
  { name: 'share-embedded', viewer: 'public', path: (site) => `/share/${site.shareSecret}/embed` },
  {
    name: 'share-expired',
    viewer: 'public',
    path: (site) => `/share/${site.expiredShareSecret}`,
    status: 410,
  },
  // Not slotfeed's page but the one its connect flow sends a visitor to (the simulator stands in for Calendbook).
  { name: 'simulator-consent', viewer: 'public', path: (site) => site.consentPageUrl() },
];

/**
 * The two widths every page is checked and photographed at. The phone is the narrowest in common use, and a
 * mobile one: like a real phone's browser it lays out a page without a viewport meta tag 980 px wide.
 */
export const VIEWPORTS = [
  { label: 'desktop', width: 1280, height: 800, mobile: false },
  { label: 'phone', width: 360, height: 800, mobile: true },
] as const;

export type SiteViewport = (typeof VIEWPORTS)[number];
