// Authorization codes, grants and refresh tokens. A grant is one authorization (one redeemed code) and every token
// descended from it; revoking a grant kills its refresh tokens and its access tokens (tracked by jti).
import { randomBytes } from 'node:crypto';
import type { SimClock } from './clock.js';
import type { IssuedCredential } from './types.js';

export const AUTHORIZATION_CODE_TTL_MS = 60_000;

export interface AuthorizationCode {
  clientId: string;
  redirectUri: string;
  userId: string;
  scope: string;
  codeChallenge: string | null;
  issuedAtMs: number;
  /** Set once redeemed; a second redemption revokes this grant (RFC 6749 §10.5). */
  redeemedGrantId: string | null;
}

export interface Grant {
  id: string;
  userId: string;
  clientId: string;
  scope: string;
  revoked: boolean;
  accessTokenIds: Set<string>;
}

interface RefreshTokenRecord {
  grantId: string;
  /** With rotation on, a refresh token is spent by its first use; presenting it again is theft. */
  spent: boolean;
}

export interface GrantStore {
  issueCode(input: Omit<AuthorizationCode, 'issuedAtMs' | 'redeemedGrantId'>): string;
  findCode(code: string): AuthorizationCode | undefined;
  isCodeExpired(code: AuthorizationCode): boolean;
  createGrant(input: { userId: string; clientId: string; scope: string }): Grant;
  issueRefreshToken(grant: Grant): string;
  findRefreshToken(token: string): { grant: Grant; spent: boolean } | undefined;
  spendRefreshToken(token: string): void;
  recordAccessToken(grant: Grant, jti: string): void;
  isAccessTokenActive(jti: string): boolean;
  revokeGrant(grantId: string): void;
  revokeUserGrants(userId: string): number;
  /** For per-user call counts of the token endpoint; never consumes anything. */
  userOfCredential(kind: 'code' | 'refresh_token', value: string): string | null;
}

const opaqueToken = () => randomBytes(32).toString('base64url');

export function createGrantStore(
  clock: SimClock,
  onIssued: (credential: IssuedCredential) => void = () => undefined,
): GrantStore {
  const codes = new Map<string, AuthorizationCode>();
  const grants = new Map<string, Grant>();
  const refreshTokens = new Map<string, RefreshTokenRecord>();
  const grantOfAccessToken = new Map<string, string>();

  const revokeGrant = (grantId: string) => {
    const grant = grants.get(grantId);
    if (grant) grant.revoked = true;
  };

  return {
    issueCode(input) {
      const code = opaqueToken();
      codes.set(code, { ...input, issuedAtMs: clock.nowMs(), redeemedGrantId: null });
      onIssued({ kind: 'authorization_code', value: code, userId: input.userId });
      return code;
    },
    findCode: (code) => codes.get(code),
    isCodeExpired: (code) => clock.nowMs() >= code.issuedAtMs + AUTHORIZATION_CODE_TTL_MS,
    createGrant(input) {
      const grant: Grant = { id: opaqueToken(), ...input, revoked: false, accessTokenIds: new Set() };
      grants.set(grant.id, grant);
      return grant;
    },
    issueRefreshToken(grant) {
      const token = opaqueToken();
      refreshTokens.set(token, { grantId: grant.id, spent: false });
      onIssued({ kind: 'refresh_token', value: token, userId: grant.userId });
      return token;
    },
    findRefreshToken(token) {
      const record = refreshTokens.get(token);
      const grant = record ? grants.get(record.grantId) : undefined;
      return record && grant ? { grant, spent: record.spent } : undefined;
    },
    spendRefreshToken(token) {
      const record = refreshTokens.get(token);
      if (record) record.spent = true;
    },
    recordAccessToken(grant, jti) {
      grant.accessTokenIds.add(jti);
      grantOfAccessToken.set(jti, grant.id);
    },
    isAccessTokenActive(jti) {
      const grantId = grantOfAccessToken.get(jti);
      const grant = grantId ? grants.get(grantId) : undefined;
      return grant !== undefined && !grant.revoked;
    },
    revokeGrant,
    revokeUserGrants(userId) {
      let count = 0;
      for (const grant of grants.values()) {
        if (grant.userId === userId && !grant.revoked) {
          grant.revoked = true;
          count++;
        }
      }
      return count;
    },
    userOfCredential(kind, value) {
      if (kind === 'code') return codes.get(value)?.userId ?? null;
      const record = refreshTokens.get(value);
      return record ? (grants.get(record.grantId)?.userId ?? null) : null;
    },
  };
}
