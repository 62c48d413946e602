// What revoking a feed or an API key found or did: revoking is idempotent, so a second revoke keeps the first
// time, and the caller can tell an operator that it was already revoked, and when.
export interface Revocation {
  revokedAt: Date;
  /** True when it was revoked before this call (then `revokedAt` is that earlier time). */
  alreadyRevoked: boolean;
}
