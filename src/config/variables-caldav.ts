// CalDAV destinations (src/destinations/): how often each calendar is checked against its feed, how pushes are
// handed out, and which servers may be written to.
import { z } from 'zod';
import { positiveInt } from './value-schemas.js';
import { section, variable } from './variable.js';

export const caldavSection = section({
  variables: {
    reconcileIntervalMinutes: variable({
      name: 'CALDAV_RECONCILE_INTERVAL_MINUTES',
      description:
        'How often each CalDAV destination is compared with what its calendar holds: events deleted or edited there are written again, strays of its feed deleted (also on demand).',
      default: '180',
      schema: positiveInt(7 * 24 * 60),
    }),
    allowPrivateTargets: variable({
      name: 'CALDAV_ALLOW_PRIVATE_TARGETS',
      description:
        'true: CalDAV servers on private, loopback and link-local addresses (and plain http to them) are allowed (a server on this network, tests); false refuses them (SSRF).',
      default: 'false',
      schema: z.enum(['true', 'false']).transform((v) => v === 'true'),
    }),
    dispatchIntervalMs: variable({
      name: 'CALDAV_DISPATCH_INTERVAL_MS',
      description:
        'How often a worker looks for CalDAV destinations whose feed changed (or whose reconciliation or retry is due) and queues their push.',
      default: '2000',
      schema: positiveInt(60_000),
    }),
    timeoutSeconds: variable({
      name: 'CALDAV_TIMEOUT_SECONDS',
      description:
        'Time limit of each request to a CalDAV server; a request without an answer by then fails the push, which is tried again after the backoff.',
      default: '20',
      schema: positiveInt(300),
    }),
    hostConcurrency: variable({
      name: 'CALDAV_HOST_CONCURRENCY',
      description:
        'Requests under way at one CalDAV host, across every worker: a slow or busy server holds no more than this many, and pushes to other hosts go on.',
      default: '4',
      schema: positiveInt(100),
    }),
    hostRatePerSecond: variable({
      name: 'CALDAV_HOST_RATE_PER_SECOND',
      description:
        'Requests a second to one CalDAV host, across every worker (0: no limit). A 429 or 503 with Retry-After holds back the whole host until the time given.',
      default: '100',
      schema: z.coerce.number().int().min(0).max(10_000),
    }),
    concurrency: variable({
      name: 'CALDAV_CONCURRENCY',
      description:
        'CalDAV destinations one worker process pushes at the same time. A push mostly waits (on the server, on Postgres), so a process carries many; each server still gets at most CALDAV_HOST_CONCURRENCY requests at once, and a slow server holds up to twice that many of a worker’s pushes (its requests, and as many waiting in line or reading their feed): keep this well above it.',
      default: '32',
      schema: positiveInt(100),
    }),
  },
});
