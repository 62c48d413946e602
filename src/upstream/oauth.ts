import { createHash, randomBytes } from 'node:crypto';
import { UpstreamInvalidPayloadError } from './errors.js';
import { exchangeJson } from './http-exchange.js';
import type { ExchangeSettings } from './http-exchange.js';
import { parsePayload } from './payload-check.js';
import { tokenResponseSchema } from './schemas.js';
import { tokenLifetime, tokenSubject } from './token-lifetime.js';

export { tokenLifetime, DEFAULT_TOKEN_LIFETIME_MS } from './token-lifetime.js';
export type { TokenLifetime, TokenLifetimeInput } from './token-lifetime.js';

export type OAuthEndpoint = 'POST /oauth2/token';

export interface OAuthClientOptions {
  authUrl: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** Scope names are not in the seed; sent only when configured. */
  scope?: string;
  timeoutMs: number;
  fetch?: typeof fetch;
  now?: () => Date;
  /** Default client_secret_post (credentials in the form); client_secret_basic sends them in Authorization. */
  clientAuth?: 'client_secret_post' | 'client_secret_basic';
  signal?: AbortSignal;
  onCall?: (endpoint: OAuthEndpoint, outcome: { status?: number; ms: number }) => void;
}

export interface TokenSet {
  accessToken: string;
  refreshToken: string;
  expiresAt: Date;
  scope?: string;
  /** The access token's JWT `sub`, decoded without verification (we are not the audience's verifier). */
  subject?: string;
}

export interface AuthorizationRequest {
  url: string;
  /** To be kept (e.g. in a signed cookie) and compared with the callback's state. */
  state: string;
  /** Present when PKCE is used; needed again for exchangeCode. */
  codeVerifier?: string;
}

export interface OAuthClient {
  buildAuthorizationRequest(opts?: { loginHint?: string; usePkce?: boolean }): AuthorizationRequest;
  exchangeCode(code: string, codeVerifier?: string): Promise<TokenSet>;
  /** Keeps the old refresh token when the response carries none. */
  refresh(refreshToken: string): Promise<TokenSet>;
}

// A token response is a handful of short strings; anything near this size is not one.
const MAX_TOKEN_RESPONSE_BYTES = 64 * 1024;

// 32 random bytes → 43 base64url characters: 256 bits of state (≥128 asked) and a PKCE verifier at the
// lower bound of RFC 7636's 43–128 characters, all from the unreserved alphabet it requires.
function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

export function pkceChallengeOf(codeVerifier: string): string {
  return createHash('sha256').update(codeVerifier, 'ascii').digest('base64url');
}

// RFC 6749 §2.3.1: for HTTP Basic the client id and secret are form-urlencoded before base64.
function basicCredentials(clientId: string, clientSecret: string): string {
  const encode = (v: string) => encodeURIComponent(v).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(clientSecret)}`).toString('base64')}`;
}

/** OAuth 2.0 authorization code flow against the service's authorization server (seed §5.2). */
export function createOAuthClient(o: OAuthClientOptions): OAuthClient {
  const authBase = o.authUrl.replace(/\/+$/, '');
  const now = o.now ?? (() => new Date());
  const settings: ExchangeSettings<OAuthEndpoint> = {
    fetch: o.fetch ?? globalThis.fetch,
    timeoutMs: o.timeoutMs,
    now,
    maxBodyBytes: MAX_TOKEN_RESPONSE_BYTES,
    signal: o.signal,
    onCall: o.onCall,
  };
  const endpoint: OAuthEndpoint = 'POST /oauth2/token';

  /**
   * POSTs a grant to the token endpoint. `previousRefreshToken` is what a refresh falls back to when the
   * response carries no new one (rotation is optional, RFC 6749 §6); the code grant has none to fall back
   * to, and seed §5.2 step 3 promises a refresh token there, so its absence is a broken answer.
   */
  async function requestTokens(
    grant: Record<string, string>,
    secrets: string[],
    previousRefreshToken: string | undefined,
  ): Promise<TokenSet> {
    const form = new URLSearchParams(grant);
    const headers: Record<string, string> = {
      accept: 'application/json',
      'content-type': 'application/x-www-form-urlencoded',
    };
    if (o.clientAuth === 'client_secret_basic') {
      headers['authorization'] = basicCredentials(o.clientId, o.clientSecret);
    } else {
      form.set('client_id', o.clientId);
      form.set('client_secret', o.clientSecret);
    }
    const sentAt = now();
    const { status, json } = await exchangeJson(settings, {
      endpoint,
      url: new URL(`${authBase}/oauth2/token`),
      method: 'POST',
      headers,
      body: form.toString(),
      // A redirect would re-send the client secret to wherever it points: surface it instead of following.
      redirect: 'manual',
      secrets: [...secrets, o.clientSecret],
    });
    const tokens = parsePayload(tokenResponseSchema, json, { endpoint, status });
    const refreshToken = tokens.refresh_token ?? previousRefreshToken;
    if (refreshToken === undefined) {
      throw new UpstreamInvalidPayloadError({
        endpoint,
        status,
        path: 'refresh_token',
        issue: 'missing from the authorization_code grant response',
        retryable: false,
      });
    }
    const { expiresAt } = tokenLifetime({
      expiresIn: tokens.expires_in,
      accessToken: tokens.access_token,
      now: sentAt,
    });
    const subject = tokenSubject(tokens.access_token);
    return {
      accessToken: tokens.access_token,
      refreshToken,
      expiresAt,
      ...(tokens.scope === undefined ? {} : { scope: tokens.scope }),
      ...(subject === undefined ? {} : { subject }),
    };
  }

  return {
    buildAuthorizationRequest(opts = {}) {
      const state = randomToken();
      const url = new URL(`${authBase}/login`);
      url.searchParams.set('client_id', o.clientId);
      url.searchParams.set('redirect_uri', o.redirectUri);
      url.searchParams.set('response_type', 'code');
      if (o.scope !== undefined) url.searchParams.set('scope', o.scope);
      url.searchParams.set('state', state);
      if (opts.loginHint !== undefined) url.searchParams.set('login_hint', opts.loginHint);
      if (opts.usePkce === false) return { url: url.toString(), state };
      const codeVerifier = randomToken();
      url.searchParams.set('code_challenge', pkceChallengeOf(codeVerifier));
      url.searchParams.set('code_challenge_method', 'S256');
      return { url: url.toString(), state, codeVerifier };
    },

    async exchangeCode(code, codeVerifier) {
      const grant: Record<string, string> = {
        grant_type: 'authorization_code',
        code,
        redirect_uri: o.redirectUri,
      };
      if (codeVerifier !== undefined) grant['code_verifier'] = codeVerifier;
      return requestTokens(grant, codeVerifier === undefined ? [code] : [code, codeVerifier], undefined);
    },

    refresh(refreshToken) {
      return requestTokens(
        { grant_type: 'refresh_token', refresh_token: refreshToken },
        [refreshToken],
        refreshToken,
      );
    },
  };
}
