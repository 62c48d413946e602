// The web role: where it listens, its public URL, admin, feeds, proxies, sessions and rate limits.
import { z } from 'zod';
import { weaknessOf } from '../lib/secret-strength.js';
import { httpUrl, positiveInt } from './value-schemas.js';
import { section, variable } from './variable.js';

// What fastify's trustProxy takes: true trusts every hop, so the left-most X-Forwarded-For entry, which the
// client itself may have written, becomes the address rate limits count by.
// (A hop count is not offered: fastify 5.12 trusts nobody for one, since it cannot check the nearest peer.)
const trustProxy = z.string().transform((v, ctx) => {
  if (v === 'true' || v === 'false') return v === 'true';
  if (/^[0-9A-Fa-f.:/]+(\s*,\s*[0-9A-Fa-f.:/]+)*$/.test(v)) return v.replace(/\s+/g, '');
  ctx.addIssue({ code: 'custom', message: 'must be true, false, or the proxies’ addresses or CIDRs' });
  return z.NEVER;
});

/** Generated tokens pass easily (see secret-strength.ts); 32 characters of base64 are ~190 bits. */
const ADMIN_TOKEN_STRENGTH = { minLength: 32, minBits: 80 };

export const webSection = section({
  variables: {
    host: variable({
      name: 'WEB_HOST',
      description: 'Interface the web server listens on (0.0.0.0 in a container).',
      default: '127.0.0.1',
      schema: z.string().min(1),
    }),
    port: variable({
      name: 'WEB_PORT',
      description: 'Port of the web server (feeds, connect flow, admin, health and metrics).',
      default: '3000',
      schema: z.coerce.number().int().min(0).max(65_535),
    }),
    publicBaseUrl: variable({
      name: 'PUBLIC_BASE_URL',
      description:
        'Base URL at which calendar apps and browsers reach slotfeed; feed links are built from it.',
      default: 'http://127.0.0.1:3000',
      schema: httpUrl,
    }),
    adminToken: variable({
      name: 'ADMIN_TOKEN',
      description:
        'Token that opens the admin page and the queue dashboard: 32+ random characters (`openssl rand -base64 32`); empty disables admin.',
      default: '',
      secret: true,
      // The message follows the variable's name: "ADMIN_TOKEN is too short: …".
      schema: z.string().superRefine((v, ctx) => {
        const weakness = v === '' ? undefined : weaknessOf(v, ADMIN_TOKEN_STRENGTH);
        if (weakness !== undefined) {
          ctx.addIssue({
            code: 'custom',
            message: `${weakness} (make one with \`openssl rand -base64 32\`, or leave it empty to disable admin)`,
          });
        }
      }),
    }),
    feedDefaultDays: variable({
      name: 'FEED_DEFAULT_DAYS',
      description: 'Days ahead a feed shows when it does not set its own day range.',
      default: '28',
      schema: positiveInt(366),
    }),
    feedMaxEvents: variable({
      name: 'FEED_MAX_EVENTS',
      description:
        'Most events one feed carries (earliest first), so a feed stays small enough for every calendar app.',
      default: '1000',
      schema: positiveInt(100_000),
    }),
    feedGzip: variable({
      name: 'FEED_GZIP',
      description: 'Compress feed responses with gzip when the client asks for it (true or false).',
      default: 'true',
      schema: z.enum(['true', 'false']).transform((v) => v === 'true'),
    }),
    feedOutageGraceSeconds: variable({
      name: 'FEED_OUTAGE_GRACE_SECONDS',
      description:
        "Seconds a served feed keeps serving its last bytes while Postgres cannot answer, from its token's last confirmation; 0: off.",
      default: '21600',
      // A week at most: past that, the free time shown is too old to be worth serving.
      schema: z.coerce.number().int().min(0).max(604_800),
    }),
    trustProxy: variable({
      name: 'TRUST_PROXY',
      description:
        'Whose X-Forwarded-* headers to believe: false; the reverse proxies’ addresses or CIDRs, comma-separated; or true (every hop: then clients can pick the address rate limits count them by).',
      default: 'false',
      schema: trustProxy,
    }),
    requestTimeoutMs: variable({
      name: 'WEB_REQUEST_TIMEOUT_MS',
      description:
        'Longest a client may take to send a whole request, headers and body; a slower one gets 408 and is disconnected.',
      default: '10000',
      schema: z.coerce.number().int().min(100).max(600_000),
    }),
    adminSessionSeconds: variable({
      name: 'ADMIN_SESSION_SECONDS',
      description:
        'How long an admin sign-in lasts; signing out ends it at once on every copy of the cookie.',
      default: '28800',
      schema: z.coerce.number().int().min(60).max(604_800),
    }),
    ownerSessionSeconds: variable({
      name: 'OWNER_SESSION_SECONDS',
      description:
        'How long an account owner stays signed in to their page (signed in with Calendbook); signing out, or deleting their data, ends it at once.',
      default: '1209600',
      schema: z.coerce.number().int().min(60).max(7_776_000),
    }),
    rateLimits: {
      connectPerMinute: variable({
        name: 'CONNECT_RATE_LIMIT_PER_MINUTE',
        description:
          'Requests one client address may make to /connect per minute, and as many to /oauth/callback; 0 means no limit.',
        default: '20',
        schema: z.coerce.number().int().min(0).max(1_000_000),
      }),
      feedsPerMinute: variable({
        name: 'FEED_RATE_LIMIT_PER_MINUTE',
        description:
          'Feed requests one client address may make per minute (calendar services poll many feeds from few addresses); 0 means no limit.',
        default: '600',
        schema: z.coerce.number().int().min(0).max(1_000_000),
      }),
      apiPerMinute: variable({
        name: 'API_RATE_LIMIT_PER_MINUTE',
        description:
          'JSON API requests one credential (or, without one, one client address) may make per minute; 0 means no limit.',
        default: '300',
        schema: z.coerce.number().int().min(0).max(1_000_000),
      }),
    },
  },
});
