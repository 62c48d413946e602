// The scheduling service ("Calendbook") as typed calls: REST API, OAuth 2.0, payload schemas, errors.
export { createApiClient, DEFAULT_MAX_BODY_BYTES } from './api-client.js';
export type {
  ApiClient,
  ApiClientOptions,
  OverviewQuery,
  SlotsQuery,
  UpstreamEndpoint,
} from './api-client.js';
export { createOAuthClient, pkceChallengeOf } from './oauth.js';
export type {
  AuthorizationRequest,
  OAuthClient,
  OAuthClientOptions,
  OAuthEndpoint,
  TokenSet,
} from './oauth.js';
export {
  tokenLifetime,
  tokenSubject,
  statedAccessTokenLifetimeMs,
  DEFAULT_TOKEN_LIFETIME_MS,
} from './token-lifetime.js';
export type { TokenLifetime, TokenLifetimeInput } from './token-lifetime.js';
export {
  parseRetryAfter,
  upstreamErrorFromResponse,
  UpstreamError,
  UpstreamAuthError,
  UpstreamRateLimitedError,
  UpstreamBadRequestError,
  UpstreamNotFoundError,
  UpstreamUnavailableError,
  UpstreamInvalidPayloadError,
} from './errors.js';
export type {
  UpstreamAuthReason,
  UpstreamErrorCode,
  UpstreamResponseFailure,
  UpstreamUnavailableCause,
} from './errors.js';
export {
  eventTypeSchema,
  eventTypeListSchema,
  profileSchema,
  overviewSchema,
  slotListSchema,
  tokenResponseSchema,
} from './schemas.js';
export type { EventType, Overview, Profile, SlotList, TokenResponse } from './schemas.js';
export { formatIssuePath } from './payload-check.js';
