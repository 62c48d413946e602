// Bull Board (the BullMQ dashboard) at /admin/queues, for both queues. It is registered inside the admin
// guard's scope, so its page, its static files and its JSON API all need an administrator.
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { FastifyInstance } from 'fastify';
import type { WebDeps } from './web-deps.js';

type BoardServerAdapter = Parameters<typeof createBullBoard>[0]['serverAdapter'];

export const QUEUE_DASHBOARD_PATH = '/admin/queues';

export async function registerQueueDashboard(app: FastifyInstance, deps: WebDeps): Promise<void> {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    queues: [new BullMQAdapter(deps.syncQueue), new BullMQAdapter(deps.tickQueue)],
    // @bull-board/fastify 9.10.1 types itself against its own nested @bull-board/api 9.10.1; the interface
    // is the same in 9.10.2, only the declarations are two copies.
    serverAdapter: serverAdapter as unknown as BoardServerAdapter,
    options: { uiConfig: { boardTitle: 'slotfeed queues' } },
  });
  await app.register(serverAdapter.registerPlugin(), { prefix: QUEUE_DASHBOARD_PATH });
}
