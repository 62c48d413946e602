// Error bodies end up in error messages, and error messages end up in logs and in the sync_run table.
// A service may echo what it was sent (an authorization code, a refresh token) or a proxy may answer with a
// whole HTML page, so an excerpt is: the error fields of a JSON body when there are any, tags stripped,
// known secrets and anything token-shaped redacted, whitespace collapsed, and at most 200 characters.

export const MAX_EXCERPT_CHARS = 200;

const REDACTED = '[redacted]';

// JWTs (the service's access tokens are JWTs), "Bearer <x>", key=value / "key": "value" pairs whose key
// names a credential, and any long run of token alphabet (opaque tokens, codes, hashes).
const TOKEN_SHAPES: readonly RegExp[] = [
  /eyJ[\w-]*\.[\w-]*\.[\w-]*/g,
  /\b(bearer|basic)\s+[^\s"',;]+/gi,
  /\b(access_token|refresh_token|id_token|token|code|code_verifier|client_secret|secret|password|assertion)\b(["']?\s*[:=]\s*["']?)[^\s"'&,;}]+/gi,
  /[A-Za-z0-9+/_=-]{32,}/g,
];

const JSON_MESSAGE_FIELDS = ['error', 'error_description', 'message', 'detail', 'title'] as const;

function jsonErrorText(bodyText: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const record = parsed as Record<string, unknown>;
  const parts = JSON_MESSAGE_FIELDS.map((k) => record[k]).filter(
    (v): v is string | number => typeof v === 'string' || typeof v === 'number',
  );
  return parts.length > 0 ? parts.join(': ') : undefined;
}

function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  // Exact secrets first: a short code would slip past the token-shaped patterns. Very short values are
  // skipped because replacing e.g. "a" everywhere would shred the message and hide nothing.
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join(REDACTED);
  }
  out = out.replace(TOKEN_SHAPES[0]!, REDACTED);
  out = out.replace(TOKEN_SHAPES[1]!, (_m, scheme: string) => `${scheme} ${REDACTED}`);
  out = out.replace(TOKEN_SHAPES[2]!, (_m, key: string, sep: string) => `${key}${sep}${REDACTED}`);
  return out.replace(TOKEN_SHAPES[3]!, (m) => (m === REDACTED ? m : REDACTED));
}

/** A short, log-safe excerpt of an error response body; undefined when nothing readable is left. */
export function sanitizedExcerpt(bodyText: string, secrets: readonly string[] = []): string | undefined {
  const source = jsonErrorText(bodyText) ?? bodyText.replace(/<[^>]*>/g, ' ');
  const flat = redact(source, secrets)
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (flat === '') return undefined;
  return flat.length > MAX_EXCERPT_CHARS ? `${flat.slice(0, MAX_EXCERPT_CHARS - 1)}…` : flat;
}
