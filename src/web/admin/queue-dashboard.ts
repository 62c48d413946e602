// Bull Board (the BullMQ dashboard) at /admin/queues, for every queue (sync, tick, webhook deliveries, CalDAV). It is
// registered inside the admin guard's scope, so its page, its static files and its JSON API all need an
// administrator.
// Its page gets the headers of our own pages (no caching, no framing, no Referer to other sites, nosniff) with
// a CSP that fits it: its scripts, styles and images come from its static files, its inline styles need
// 'unsafe-inline'. Bull Board's HTML template (@bull-board/ui's dist/index.ejs) links Google Fonts; an admin
// page that reports every visit to a third party, and breaks on a network without it, is not wanted, so the
// link is taken out as the page is sent (its CSS falls back to system fonts). Editing the page on its way
// out, rather than shipping a copy of the template, keeps working when Bull Board renames its hashed assets.
// Everything the board shows is read from Redis: while the queues' connection is down it answers 503 at once
// (its requests used to hang until Redis came back).
import { createBullBoard } from '@bull-board/api';
import type { Queue } from 'bullmq';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { noteForAccessLog } from '../access-log.js';
import { REDIS_RETRY_AFTER_SECONDS, REDIS_UNAVAILABLE_MESSAGE, sendError } from '../error-handler.js';
import { ADMIN_HOME } from './admin-pages.js';
import { pageSecurityHeaders } from '../html.js';
import type { WebDeps } from '../web-deps.js';

type BoardServerAdapter = Parameters<typeof createBullBoard>[0]['serverAdapter'];

export const QUEUE_DASHBOARD_PATH = '/admin/queues';

const BOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "form-action 'self'",
  // The template sets <base href="/admin/queues/">.
  "base-uri 'self'",
  "frame-ancestors 'none'",
].join('; ');

// Any stylesheet, font or preconnect link to another origin (today: fonts.googleapis.com).
const EXTERNAL_LINK = /<link\b[^>]*\bhref=["']?(?:https?:)?\/\/[^>]*>\s*/gi;

export function withoutExternalLinks(page: string): string {
  return page.replace(EXTERNAL_LINK, '');
}

// Bull Board's status tabs (Latest, Active, Waiting, …, Paused) are one strip that scrolls sideways with its
// scrollbar hidden and its ends faded out: on a phone (and at times at 1280 px) the last tabs were out of sight
// with nothing saying so. Wrapped onto more lines, every tab is in view. Its class names carry a hash after the
// prefix, hence the attribute selector.
const WRAPPED_STATUS_TABS =
  '<style>[class^="statusTabs-"]{flex-wrap:wrap!important;overflow:visible!important;' +
  '-webkit-mask-image:none!important;mask-image:none!important}</style>';

export function withWrappedStatusTabs(page: string): string {
  return page.replace('</head>', `${WRAPPED_STATUS_TABS}</head>`);
}

async function boardHeaders(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): Promise<unknown> {
  const type = String(reply.getHeader('content-type') ?? '');
  // Our own pages (the login form the guard answers with) come with a stricter CSP already.
  if (type.startsWith('text/html') && !reply.hasHeader('content-security-policy')) {
    reply.headers(pageSecurityHeaders(BOARD_CSP));
    return typeof payload === 'string' ? withWrappedStatusTabs(withoutExternalLinks(payload)) : payload;
  }
  reply.header('x-content-type-options', 'nosniff').header('referrer-policy', 'same-origin');
  // The API's answers are live queue data; the static files have hashed names and may be cached.
  if (request.url.startsWith(`${QUEUE_DASHBOARD_PATH}/api/`)) reply.header('cache-control', 'no-store');
  return payload;
}

/**
 * The board tells queues apart by name: a queue sharded over hash tags (REDIS_SHARDS) has one queue of the same
 * name per shard, so each is shown under its Redis prefix ({slotfeed-3} sync); with one shard, the name alone.
 */
function boardNaming(queue: Queue, all: readonly Queue[]): { prefix?: string } {
  const shared = all.filter((other) => other.name === queue.name).length > 1;
  return shared ? { prefix: `${queue.opts.prefix} ` } : {};
}

export async function registerQueueDashboard(app: FastifyInstance, deps: WebDeps): Promise<void> {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    queues: deps.dashboardQueues.map(
      (queue) => new BullMQAdapter(queue, boardNaming(queue, deps.dashboardQueues)),
    ),
    // @bull-board/fastify 9.10.1 types itself against its own nested @bull-board/api 9.10.1; the interface
    // is the same in 9.10.2, only the declarations are two copies.
    serverAdapter: serverAdapter as unknown as BoardServerAdapter,
    options: {
      uiConfig: {
        boardTitle: 'slotfeed queues',
        // In the board's header menu: the way back to slotfeed's admin page.
        miscLinks: [{ text: '← slotfeed admin', url: ADMIN_HOME }],
        // Its documentation lives on another site; the link is noise on an operator's page.
        hideDocsLink: true,
      },
    },
  });
  await app.register(async (board) => {
    // Answered here rather than thrown: Bull Board's plugin installs an error handler of its own.
    board.addHook('onRequest', async (request, reply) => {
      if (deps.redis.status === 'ready') return undefined;
      noteForAccessLog(request, 'warn', { redisUnavailable: 'not_connected' });
      reply.header('retry-after', String(REDIS_RETRY_AFTER_SECONDS));
      return sendError(request, reply, 503, REDIS_UNAVAILABLE_MESSAGE);
    });
    board.addHook('onSend', boardHeaders);
    await board.register(serverAdapter.registerPlugin(), { prefix: QUEUE_DASHBOARD_PATH });
  });
}
