// The one logger factory. Secrets are redacted by key name at any depth of a log object: pino's own `redact`
// takes fixed paths only, and a token can arrive nested anywhere (an upstream error's request, a job's data,
// a fastify request's headers).
import { pino, stdSerializers, type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

export const REDACTED = '[redacted]';

const SECRET_KEYS = new Set(
  [
    'authorization',
    'proxy-authorization',
    'cookie',
    'set-cookie',
    'access_token',
    'accessToken',
    'refresh_token',
    'refreshToken',
    'id_token',
    'client_secret',
    'clientSecret',
    'code_verifier',
    'codeVerifier',
    'password',
    'token',
    'feedToken',
    'feed_token',
    'adminToken',
    'secret',
    'encryptionKey',
    'TOKEN_ENCRYPTION_KEY',
    'CALENDBOOK_CLIENT_SECRET',
  ].map((k) => k.toLowerCase()),
);

// Bearer credentials and URL userinfo can also hide inside free text (an error message, a URL).
const BEARER_IN_TEXT = /\b(Bearer|Basic)\s+[A-Za-z0-9\-._~+/]+=*/gi;
const URL_USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+(:[^/\s@]*)?@/gi;
// A path segment that is itself a bearer secret: a feed's token, a share link's secret (its page, .txt, .ics and
// /embed). Percent-encoded characters too: the router decodes them, so `/share/%41bc…` opens the same link.
// test/security/secrets-in-paths.test.ts requests every route whose path carries a secret and reads the log.
const SECRET_PATH = /(\/(?:feeds|freebusy|share)\/)[A-Za-z0-9_~%-]{8,}/g;
// An OAuth callback URL carries the authorization code; token-bearing query parameters may appear in any URL.
const SECRET_QUERY =
  /([?&](?:code|code_verifier|access_token|refresh_token|token|client_secret)=)[^&\s#"']+/gi;

export function redactText(text: string): string {
  return text
    .replace(BEARER_IN_TEXT, `$1 ${REDACTED}`)
    .replace(URL_USERINFO, `$1${REDACTED}@`)
    .replace(SECRET_PATH, `$1${REDACTED}`)
    .replace(SECRET_QUERY, `$1${REDACTED}`);
}

const MAX_DEPTH = 8;

/** A copy of `value` with secret-named keys replaced and secrets in strings masked; cycles are cut. */
export function redactSecrets(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '[too deep]';
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  if (value instanceof Error) return redactSecrets(stdSerializers.err(value), depth, seen);
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item, depth + 1, seen));
  if (value instanceof Date || Buffer.isBuffer(value)) return value;
  if (value instanceof Headers) return redactSecrets(Object.fromEntries(value.entries()), depth, seen);
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    copy[key] =
      SECRET_KEYS.has(key.toLowerCase()) && item != null ? REDACTED : redactSecrets(item, depth + 1, seen);
  }
  return copy;
}

export interface LoggerOptions {
  level: string;
  /** Human-readable lines (pino-pretty) instead of JSON; for a person at a terminal, never for collectors. */
  pretty?: boolean;
  /** Where lines go; stdout when absent. Tests pass a stream to read what was logged. */
  destination?: DestinationStream;
  base?: Record<string, unknown>;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      base: options.base ?? { service: 'slotfeed' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        log: (object) => redactSecrets(object) as Record<string, unknown>,
      },
      hooks: {
        // The message string is redacted too: `log.info(\`calling ${url}\`)` must not leak a feed token.
        logMethod(args, method) {
          const redacted = args.map((arg) => (typeof arg === 'string' ? redactText(arg) : arg));
          return method.apply(this, redacted as Parameters<typeof method>);
        },
      },
    },
    options.destination ??
      (options.pretty ? pino.transport({ target: 'pino-pretty', options: { destination: 1 } }) : undefined),
  );
}

/** The logger a command uses: JSON lines, or pretty ones when LOG_FORMAT asks (or is auto on a terminal). */
export function createLoggerFor(log: { level: string; format: 'auto' | 'json' | 'pretty' }): Logger {
  const pretty = log.format === 'pretty' || (log.format === 'auto' && process.stdout.isTTY === true);
  return createLogger({ level: log.level, pretty });
}
