// Webhook deliveries: which targets, how long, how often, and when an endpoint is given up.
import { z } from 'zod';
import { positiveInt } from './value-schemas.js';
import { section, variable } from './variable.js';

export const webhooksSection = section({
  variables: {
    allowPrivateTargets: variable({
      name: 'WEBHOOK_ALLOW_PRIVATE_TARGETS',
      description:
        'true: webhook endpoints on private, loopback and link-local addresses are allowed (a receiver on this host, tests); false refuses them (SSRF).',
      default: 'false',
      schema: z.enum(['true', 'false']).transform((v) => v === 'true'),
    }),
    timeoutMs: variable({
      name: 'WEBHOOK_TIMEOUT_MS',
      description: 'How long one delivery attempt waits for the receiver’s answer.',
      default: '10000',
      schema: z.coerce.number().int().min(100).max(120_000),
    }),
    maxAttempts: variable({
      name: 'WEBHOOK_MAX_ATTEMPTS',
      description:
        'Attempts per delivery, the first included; with WEBHOOK_RETRY_BASE_MS the retries span about a day.',
      default: '15',
      schema: positiveInt(30),
    }),
    retryBaseMs: variable({
      name: 'WEBHOOK_RETRY_BASE_MS',
      description: 'The first retry’s delay; each further retry waits twice as long.',
      default: '5000',
      schema: z.coerce.number().int().min(1).max(3_600_000),
    }),
    disableAfterSeconds: variable({
      name: 'WEBHOOK_DISABLE_AFTER_SECONDS',
      description:
        'An endpoint whose every delivery has failed for this long is disabled (the admin page says so).',
      default: '86400',
      schema: positiveInt(30 * 86400),
    }),
    dispatchIntervalMs: variable({
      name: 'WEBHOOK_DISPATCH_INTERVAL_MS',
      description:
        'How often a worker hands new deliveries to the queue when no sync of its own wrote any (those go at once).',
      default: '1000',
      schema: positiveInt(60_000),
    }),
    sweepIntervalSeconds: variable({
      name: 'WEBHOOK_SWEEP_INTERVAL_SECONDS',
      description:
        'How often a worker looks for pending deliveries whose queued job was lost (it also looks at start, when Redis reconnects and when the queue’s keys vanish).',
      default: '60',
      schema: positiveInt(3600),
    }),
    concurrency: variable({
      name: 'WEBHOOK_CONCURRENCY',
      description: 'Deliveries one worker process attempts at the same time.',
      default: '8',
      schema: positiveInt(200),
    }),
  },
});
