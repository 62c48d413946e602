// Feed tokens are bearer secrets in a URL that calendar apps poll for years, so they must be unguessable and
// must not be recoverable from the database: only their SHA-256 is stored. A plain (unsalted) hash is enough
// here because the token has 256 random bits; nothing can be brute-forced from the hash.
import { createHash, randomBytes } from 'node:crypto';

const TOKEN_BYTES = 32;
/** base64url of 32 bytes, without padding. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export function newFeedToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

export function hashFeedToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/**
 * A cheap shape check, for metrics and logs only. It must not decide whether a lookup happens: the web layer
 * hashes and queries malformed tokens too, so a response's timing does not tell what shape a token has.
 */
export function isWellFormedFeedToken(s: string): boolean {
  return TOKEN_SHAPE.test(s);
}
