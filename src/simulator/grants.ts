// Authorization codes, grants and refresh tokens. A grant is one authorization (one redeemed code) and every token
// descended from it; revoking a grant kills its refresh tokens and its access tokens (tracked by jti). Every
// change is reported to onChange, and the whole store is plain data both ways (snapshot, restored), so a state
// file can keep connected accounts connected across a restart.
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

/** Everything the store holds, as plain data. */
export interface GrantStoreState {
  codes: (AuthorizationCode & { code: string })[];
  grants: (Omit<Grant, 'accessTokenIds'> & { accessTokenIds: string[] })[];
  refreshTokens: (RefreshTokenRecord & { token: string })[];
}

export interface GrantStoreOptions {
  onIssued?: (credential: IssuedCredential) => void;
  /** Called after every change to what the store holds. */
  onChange?: () => void;
  /** What an earlier store's snapshot() returned; empty when absent. */
  restored?: GrantStoreState;
}

export interface GrantStore {
  issueCode(input: Omit<AuthorizationCode, 'issuedAtMs' | 'redeemedGrantId'>): string;
  findCode(code: string): AuthorizationCode | undefined;
  /** Marks a code as having bought `grantId`, so a replay of it can revoke that grant. */
  redeemCode(code: AuthorizationCode, grantId: string): void;
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
  snapshot(): GrantStoreState;
}

const opaqueToken = () => randomBytes(32).toString('base64url');

export function createGrantStore(clock: SimClock, options: GrantStoreOptions = {}): GrantStore {
  const onIssued = options.onIssued ?? (() => undefined);
  const changed = options.onChange ?? (() => undefined);
  const restored = options.restored ?? { codes: [], grants: [], refreshTokens: [] };
  const codes = new Map<string, AuthorizationCode>(restored.codes.map(({ code, ...rest }) => [code, rest]));
  const grants = new Map<string, Grant>(
    restored.grants.map((g) => [g.id, { ...g, accessTokenIds: new Set(g.accessTokenIds) }]),
  );
  const refreshTokens = new Map<string, RefreshTokenRecord>(
    restored.refreshTokens.map(({ token, ...rest }) => [token, rest]),
  );
  const grantOfAccessToken = new Map<string, string>(
    [...grants.values()].flatMap((g) => [...g.accessTokenIds].map((jti) => [jti, g.id] as const)),
  );

  const revokeGrant = (grantId: string) => {
    const grant = grants.get(grantId);
    if (!grant) return;
    grant.revoked = true;
    changed();
  };

  return {
    issueCode(input) {
      const code = opaqueToken();
      codes.set(code, { ...input, issuedAtMs: clock.nowMs(), redeemedGrantId: null });
      changed();
      onIssued({ kind: 'authorization_code', value: code, userId: input.userId });
      return code;
    },
    findCode: (code) => codes.get(code),
    redeemCode(code, grantId) {
      code.redeemedGrantId = grantId;
      changed();
    },
    isCodeExpired: (code) => clock.nowMs() >= code.issuedAtMs + AUTHORIZATION_CODE_TTL_MS,
    createGrant(input) {
      const grant: Grant = { id: opaqueToken(), ...input, revoked: false, accessTokenIds: new Set() };
      grants.set(grant.id, grant);
      changed();
      return grant;
    },
    issueRefreshToken(grant) {
      const token = opaqueToken();
      refreshTokens.set(token, { grantId: grant.id, spent: false });
      changed();
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
      changed();
    },
    recordAccessToken(grant, jti) {
      grant.accessTokenIds.add(jti);
      grantOfAccessToken.set(jti, grant.id);
      changed();
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
      if (count > 0) changed();
      return count;
    },
    userOfCredential(kind, value) {
      if (kind === 'code') return codes.get(value)?.userId ?? null;
      const record = refreshTokens.get(value);
      return record ? (grants.get(record.grantId)?.userId ?? null) : null;
    },
    snapshot: () => ({
      codes: [...codes].map(([code, issued]) => ({ code, ...issued })),
      grants: [...grants.values()].map((g) => ({ ...g, accessTokenIds: [...g.accessTokenIds] })),
      refreshTokens: [...refreshTokens].map(([token, record]) => ({ token, ...record })),
    }),
  };
}
