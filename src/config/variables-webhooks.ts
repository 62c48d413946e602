// Webhook deliveries: which targets, how long, how often, and when an endpoint is given up.
import { z } from 'zod';
import { positiveInt } from './value-schemas.js';
import { variable } from './variable.js';

export const webhooksVariables = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: variable({
    section: 'webhooks',
    description:
      'true: webhook endpoints on private, loopback and link-local addresses are allowed (a receiver on this host, tests); false refuses them (SSRF).',
    default: 'false',
    schema: z.enum(['true', 'false']).transform((v) => v === 'true'),
  }),
  WEBHOOK_TIMEOUT_MS: variable({
    section: 'webhooks',
    description: 'How long one delivery attempt waits for the receiver’s answer.',
    default: '10000',
    schema: z.coerce.number().int().min(100).max(120_000),
  }),
  WEBHOOK_MAX_ATTEMPTS: variable({
    section: 'webhooks',
    description:
      'Attempts per delivery, the first included; with WEBHOOK_RETRY_BASE_MS the retries span about a day.',
    default: '15',
    schema: positiveInt(30),
  }),
  WEBHOOK_RETRY_BASE_MS: variable({
    section: 'webhooks',
    description: 'The first retry’s delay; each further retry waits twice as long.',
    default: '5000',
    schema: z.coerce.number().int().min(1).max(3_600_000),
  }),
  WEBHOOK_DISABLE_AFTER_SECONDS: variable({
    section: 'webhooks',
    description:
      'An endpoint whose every delivery has failed for this long is disabled (the admin page says so).',
    default: '86400',
    schema: positiveInt(30 * 86400),
  }),
  WEBHOOK_DISPATCH_INTERVAL_MS: variable({
    section: 'webhooks',
    description:
      'How often a worker hands new deliveries to the queue when no sync of its own wrote any (those go at once).',
    default: '1000',
    schema: positiveInt(60_000),
  }),
  WEBHOOK_SWEEP_INTERVAL_SECONDS: variable({
    section: 'webhooks',
    description:
      'How often a worker looks for pending deliveries whose queued job was lost (it also looks at start, when Redis reconnects and when the queue’s keys vanish).',
    default: '60',
    schema: positiveInt(3600),
  }),
  WEBHOOK_CONCURRENCY: variable({
    section: 'webhooks',
    description: 'Deliveries one worker process attempts at the same time.',
    default: '8',
    schema: positiveInt(200),
  }),
} as const;
