// How early before expiry an access token is refreshed. TOKEN_REFRESH_MARGIN_SECONDS suits hour-long tokens;
// against a service whose tokens live less than the margin, every sync would refresh first (the first one in
// the same second as the code exchange), and with refresh-token rotation every refresh is one more moment in
// which a crash between the service's answer and our commit costs the grant. So the margin is capped at a
// quarter of the token's lifetime: a token is used for at least three quarters of its life.
// A quarter rather than a half: a half puts the refresh point exactly one half-lifetime after issue, where a
// sync every half-lifetime (120 s tokens, a sync a minute) lands, and the sync jitter alone would then decide
// whether every other sync refreshes.
import { statedAccessTokenLifetimeMs } from '../upstream/index.js';

export const MAX_MARGIN_SHARE_OF_LIFETIME = 0.25;

/**
 * The margin to apply to this access token: the configured one, capped by the token's lifetime as the token
 * states it (a JWT's exp − iat). Only a JWT states one; an opaque token keeps the configured margin.
 */
export function refreshMarginMs(configuredMs: number, accessToken: string): number {
  const lifetimeMs = statedAccessTokenLifetimeMs(accessToken);
  if (lifetimeMs === undefined) return configuredMs;
  return Math.min(configuredMs, lifetimeMs * MAX_MARGIN_SHARE_OF_LIFETIME);
}
