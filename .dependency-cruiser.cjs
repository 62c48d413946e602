// The walls of src/, checked in CI (`npm run lint` runs `npm run deps`). docs/architecture.md draws the layers;
// these rules are that drawing, so a change that breaks a wall fails here with the rule's name and comment.
//
// Lowest first: lib and log → config → upstream and caldav (and the simulator, standing aside) → feeds (pure
// rendering) → store (the only door to Postgres) → services (sync, serving, webhooks, destinations, reports) →
// web, cli, demo → the composition root (src/main.ts, src/composition/, src/roles/), which the CLI's commands and
// the demo start.
const LIB = '^src/(lib/|log\\.ts$)';
const CONFIG = '^src/config(\\.ts$|/)';
const UPSTREAM = '^src/upstream/';
const CALDAV = '^src/caldav/';
const SIMULATOR = '^src/simulator/';
const FEEDS = '^src/feeds/';
const STORE = '^src/store/';
const SERVICES = '^src/(sync|serving|webhooks|destinations|reports)/';
const EDGES = '^src/(web|cli|demo)/';
const ROOT = '^src/(main\\.ts$|cli\\.ts$|composition/|roles/)';
// src/web/ gives each audience a room of its own; what several of them use (HTML, time formatting, errors, rate
// limits, the CalDAV section shown to owners and admins) stands beside the rooms.
const WEB_ROOMS = ['admin', 'owner', 'feeds', 'api', 'share'];
const PRISMA = '(^src/generated/prisma/|^node_modules/(@prisma/|\\.prisma/|prisma/))';

/** Everything above `layer`: what it must not import. */
const above = (...layers) => layers.join('|');

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment:
        'An import cycle: one of the two belongs lower, or the shared part belongs in a module of its own.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'lib-is-the-floor',
      comment: 'lib/ and log.ts are generic helpers: they import nothing of slotfeed above them.',
      severity: 'error',
      from: { path: LIB },
      to: { path: '^src/', pathNot: `${LIB}|${PRISMA}` },
    },
    {
      name: 'config-above-lib-only',
      comment: 'Settings are declared from lib and their own parsers: nothing above them.',
      severity: 'error',
      from: { path: CONFIG },
      to: { path: '^src/', pathNot: `${LIB}|${CONFIG}` },
    },
    {
      name: 'upstream-knows-no-store',
      comment: 'The scheduling service client knows nothing of Postgres, feeds or the roles.',
      severity: 'error',
      from: { path: UPSTREAM },
      to: { path: '^src/', pathNot: `${LIB}|${CONFIG}|${UPSTREAM}` },
    },
    {
      name: 'caldav-knows-no-store',
      comment:
        'The CalDAV client knows nothing of Postgres, feeds, jobs or the roles: URLs, texts and ETags in and out.',
      severity: 'error',
      from: { path: CALDAV },
      to: { path: '^src/', pathNot: `${LIB}|${CONFIG}|${CALDAV}` },
    },
    {
      name: 'simulator-stands-aside',
      comment: 'The simulator stands in for the scheduling service: it shares nothing with slotfeed but lib.',
      severity: 'error',
      from: { path: SIMULATOR },
      to: { path: '^src/', pathNot: `${LIB}|${SIMULATOR}` },
    },
    {
      name: 'feeds-are-pure',
      comment: 'feeds/ renders plain data into events and bytes: no store, no serving, no HTTP, no Postgres.',
      severity: 'error',
      from: { path: FEEDS },
      to: { path: '^src/', pathNot: `${LIB}|${CONFIG}|${FEEDS}` },
    },
    {
      name: 'store-is-below-services',
      comment: 'store/ is the door to Postgres: it serves the services and knows none of them.',
      severity: 'error',
      from: { path: STORE },
      to: { path: above(SERVICES, EDGES, ROOT, UPSTREAM, CALDAV, SIMULATOR) },
    },
    {
      name: 'services-are-below-edges',
      comment:
        'Sync, serving, webhooks, destinations and reports know nothing of HTTP routes, commands, the demo or the root.',
      severity: 'error',
      from: { path: SERVICES },
      to: { path: above(EDGES, ROOT) },
    },
    {
      name: 'services-do-not-reach-into-sync',
      comment:
        'Serving, webhooks, destinations and reports stand beside the sync pipeline: what they share with it belongs lower (lib, store).',
      severity: 'error',
      from: { path: '^src/(serving|webhooks|destinations|reports)/' },
      to: { path: '^src/sync/' },
    },
    {
      name: 'web-is-below-the-root',
      comment: 'Routes and pages are composed by the root; they never reach back into it.',
      severity: 'error',
      from: { path: '^src/web/' },
      to: { path: above('^src/(cli|demo)/', ROOT) },
    },
    ...WEB_ROOMS.map((room) => ({
      name: `web-${room}-keeps-to-its-room`,
      comment: `The ${room} pages import no other audience's pages: what two audiences share stands beside the rooms in src/web/.`,
      severity: 'error',
      from: { path: `^src/web/${room}/` },
      to: { path: `^src/web/(${WEB_ROOMS.filter((r) => r !== room).join('|')})/` },
    })),
    {
      name: 'web-shared-pieces-know-no-room',
      comment:
        'What the audiences share knows none of them; app.ts composes the rooms and the landing page links to the admin sign-in.',
      severity: 'error',
      from: {
        path: '^src/web/',
        pathNot: `^src/web/((${WEB_ROOMS.join('|')})/|app\\.ts$|landing-page\\.ts$)`,
      },
      to: { path: `^src/web/(${WEB_ROOMS.join('|')})/` },
    },
    {
      name: 'only-store-touches-prisma',
      comment: 'Postgres is reached through store/ alone; the composition root only creates the client.',
      severity: 'error',
      from: { path: '^src/', pathNot: `${STORE}|${ROOT}|^src/generated/` },
      to: { path: PRISMA },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules', '^src/generated/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
