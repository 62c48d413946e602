// The web role: the fastify app (feeds, the API, pages, health and metrics), with its listener for feed change
// notices on a Postgres session of its own.
import type { Logger } from '../log.js';
import type { FeedChangeListener } from '../store/feed-change-listener.js';
import type { WebDeps } from '../web/web-deps.js';
import { startedParts, type Role } from './role.js';

export interface WebRoleDeps {
  /** Opens the listener for feed change notices; resolves once it has tried. */
  openFeedChanges(): Promise<FeedChangeListener>;
  /** The app's dependencies, given the listener. */
  webDeps(feedChanges: FeedChangeListener): WebDeps;
  /** Where to say the server listens. */
  logger: Logger;
}

export function createWebRole(deps: WebRoleDeps): Role {
  const parts = startedParts();
  return {
    name: 'web',
    async start() {
      const feedChanges = await deps.openFeedChanges();
      parts.add('feed change listener', () => feedChanges.close());
      // Loaded only where the web role runs: its modules (fastify plugins, the API's schemas and reference page,
      // the feed renderers) are ~35 MiB a worker or scheduler process would carry for nothing.
      const { startWeb } = await import('../web/app.js');
      const web = await startWeb(deps.webDeps(feedChanges));
      parts.add('web', () => web.close());
      deps.logger.info({ url: web.url }, 'web server listening');
    },
    close: parts.close,
  };
}
