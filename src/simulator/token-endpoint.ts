// POST /auth/oauth2/token (RFC 6749 §4.1.3, §6; RFC 7636 §4.6). Returns a plain response description so the
// protocol rules can be read without HTTP plumbing in the way.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { SimContext } from './context.js';
import type { Grant } from './grants.js';

export interface TokenResponse {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

export type FormBody = Record<string, string | string[] | undefined>;

export interface ClientCredentials {
  id: string | undefined;
  secret: string | undefined;
  viaBasic: boolean;
}

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };
const VERIFIER_PATTERN = /^[A-Za-z0-9\-._~]{43,128}$/;

function oauthError(error: string, description: string, status = 400, extra: Record<string, string> = {}) {
  return { status, headers: { ...NO_STORE, ...extra }, body: { error, error_description: description } };
}

/** RFC 6749 §2.3.1: Basic credentials are form-urlencoded before base64, so '+' and %XX must be decoded. */
function formDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

export function clientCredentialsOf(
  authorization: string | undefined,
  form: FormBody,
): ClientCredentials | 'both' {
  const basic = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(authorization ?? '');
  const bodyId = typeof form.client_id === 'string' ? form.client_id : undefined;
  const bodySecret = typeof form.client_secret === 'string' ? form.client_secret : undefined;
  if (!basic?.[1]) return { id: bodyId, secret: bodySecret, viaBasic: false };
  // Two authentication methods in one request is forbidden (RFC 6749 §2.3).
  if (bodySecret !== undefined) return 'both';
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return { id: undefined, secret: undefined, viaBasic: true };
  return {
    id: formDecode(decoded.slice(0, colon)),
    secret: formDecode(decoded.slice(colon + 1)),
    viaBasic: true,
  };
}

const sameSecret = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

const s256 = (verifier: string) => createHash('sha256').update(verifier, 'ascii').digest('base64url');

async function tokensFor(ctx: SimContext, grant: Grant, refreshToken: string | null): Promise<TokenResponse> {
  const { token, jti } = await ctx.tokens.issue({
    userId: grant.userId,
    clientId: grant.clientId,
    scope: grant.scope,
  });
  ctx.grants.recordAccessToken(grant, jti);
  const body: Record<string, unknown> = {
    access_token: token,
    token_type: 'Bearer',
    expires_in: ctx.tokens.ttlSeconds,
    scope: grant.scope,
  };
  return {
    status: 200,
    headers: NO_STORE,
    body: { ...body, ...(refreshToken ? { refresh_token: refreshToken } : {}) },
  };
}

async function redeemAuthorizationCode(
  ctx: SimContext,
  clientId: string,
  form: FormBody,
): Promise<TokenResponse> {
  const { code, redirect_uri: redirectUri, code_verifier: verifier } = form;
  if (typeof code !== 'string' || code === '') return oauthError('invalid_request', 'code is required');
  if (typeof redirectUri !== 'string') return oauthError('invalid_request', 'redirect_uri is required');
  const issued = ctx.grants.findCode(code);
  if (!issued || issued.clientId !== clientId)
    return oauthError('invalid_grant', 'Unknown authorization code');
  if (issued.redeemedGrantId !== null) {
    // RFC 6749 §10.5: a replayed code means it leaked; kill what it already bought.
    ctx.grants.revokeGrant(issued.redeemedGrantId);
    ctx.logger.warn({ userId: issued.userId }, 'authorization code replayed; grant revoked');
    return oauthError('invalid_grant', 'Authorization code was already used');
  }
  if (ctx.grants.isCodeExpired(issued)) return oauthError('invalid_grant', 'Authorization code expired');
  if (redirectUri !== issued.redirectUri) {
    return oauthError('invalid_grant', 'redirect_uri does not match the authorization request');
  }
  if (issued.codeChallenge !== null) {
    if (typeof verifier !== 'string') return oauthError('invalid_grant', 'code_verifier is required');
    if (!VERIFIER_PATTERN.test(verifier) || s256(verifier) !== issued.codeChallenge) {
      return oauthError('invalid_grant', 'code_verifier does not match the code_challenge');
    }
  } else if (verifier !== undefined) {
    // OAuth 2.1 §4.1.3: a verifier without a challenge is a downgrade attempt.
    return oauthError('invalid_grant', 'code_verifier sent but no code_challenge was');
  }
  const grant = ctx.grants.createGrant({ userId: issued.userId, clientId, scope: issued.scope });
  ctx.grants.redeemCode(issued, grant.id);
  return tokensFor(ctx, grant, ctx.grants.issueRefreshToken(grant));
}

async function refreshAccessToken(ctx: SimContext, clientId: string, form: FormBody): Promise<TokenResponse> {
  const presented = form.refresh_token;
  if (typeof presented !== 'string' || presented === '') {
    return oauthError('invalid_request', 'refresh_token is required');
  }
  const found = ctx.grants.findRefreshToken(presented);
  if (!found || found.grant.clientId !== clientId || found.grant.revoked) {
    return oauthError('invalid_grant', 'Refresh token is invalid, expired or revoked');
  }
  if (!ctx.client.rotateRefreshTokens) {
    // The service's default: no refresh_token in the answer, the old one stays valid.
    return tokensFor(ctx, found.grant, null);
  }
  if (found.spent) {
    // Rotation reuse detection: one of the two holders is a thief, so the whole family goes.
    ctx.grants.revokeGrant(found.grant.id);
    ctx.logger.warn({ userId: found.grant.userId }, 'rotated refresh token reused; grant revoked');
    return oauthError('invalid_grant', 'Refresh token was already used');
  }
  ctx.grants.spendRefreshToken(presented);
  return tokensFor(ctx, found.grant, ctx.grants.issueRefreshToken(found.grant));
}

export async function answerTokenRequest(
  ctx: SimContext,
  input: { contentType: string | undefined; authorization: string | undefined; form: FormBody },
): Promise<TokenResponse> {
  if (!/^application\/x-www-form-urlencoded\b/i.test(input.contentType ?? '')) {
    return oauthError('invalid_request', 'Content-Type must be application/x-www-form-urlencoded');
  }
  const repeated = Object.entries(input.form).find(([, v]) => Array.isArray(v));
  if (repeated) return oauthError('invalid_request', `${repeated[0]} must not be repeated`);
  const credentials = clientCredentialsOf(input.authorization, input.form);
  if (credentials === 'both') return oauthError('invalid_request', 'Use one client authentication method');
  const { id, secret, viaBasic } = credentials;
  const basicIdMismatch = viaBasic && typeof input.form.client_id === 'string' && input.form.client_id !== id;
  if (
    id !== ctx.client.id ||
    secret === undefined ||
    !sameSecret(secret, ctx.client.secret) ||
    basicIdMismatch
  ) {
    const challenge: Record<string, string> = viaBasic
      ? { 'www-authenticate': 'Basic realm="calendbook"' }
      : {};
    return oauthError('invalid_client', 'Client authentication failed', 401, challenge);
  }
  const grantType = input.form.grant_type;
  if (typeof grantType !== 'string' || grantType === '')
    return oauthError('invalid_request', 'grant_type is required');
  if (grantType === 'authorization_code') return redeemAuthorizationCode(ctx, id, input.form);
  if (grantType === 'refresh_token') return refreshAccessToken(ctx, id, input.form);
  return oauthError('unsupported_grant_type', `grant_type ${grantType} is not supported`);
}
