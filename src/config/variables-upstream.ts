// The scheduling service: its API, its OAuth client, and the two query parameters its description is silent on.
import { z } from 'zod';
import { httpUrl, positiveInt } from './value-schemas.js';
import { variable } from './variable.js';

const queryParamName = z.string().regex(/^[A-Za-z0-9_.-]+$/, 'must be a plain query parameter name');

export const upstreamVariables = {
  CALENDBOOK_BASE_URL: variable({
    section: 'upstream',
    description:
      'Base URL of the scheduling service API (`/events`, `/users/me`, `/calendars/…` hang below it).',
    schema: httpUrl,
  }),
  CALENDBOOK_AUTH_URL: variable({
    section: 'upstream',
    description: 'Base URL of its OAuth 2.0 authorization server (`/login`, `/oauth2/token`).',
    schema: httpUrl,
  }),
  CALENDBOOK_CLIENT_ID: variable({
    section: 'upstream',
    description: 'OAuth client id from the partner portal.',
    schema: z.string().min(1),
  }),
  CALENDBOOK_CLIENT_SECRET: variable({
    section: 'upstream',
    description: 'OAuth client secret from the partner portal.',
    secret: true,
    schema: z.string().min(1),
  }),
  CALENDBOOK_REDIRECT_URI: variable({
    section: 'upstream',
    description:
      "Redirect URI registered in the portal; slotfeed's `/oauth/callback` as users' browsers reach it.",
    schema: httpUrl,
  }),
  CALENDBOOK_SCOPE: variable({
    section: 'upstream',
    description: 'Scopes requested at authorization (space-separated); empty requests the default scopes.',
    default: '',
    schema: z.string(),
  }),
  CALENDBOOK_SLOTS_DATE_PARAM: variable({
    section: 'upstream',
    description:
      'Query parameter that carries the date of `GET /calendars/{id}/slots` (the API description is silent).',
    default: 'date',
    schema: queryParamName,
  }),
  CALENDBOOK_SLOTS_TIMEZONE_PARAM: variable({
    section: 'upstream',
    description: 'Query parameter that carries the time zone of `GET /calendars/{id}/slots`.',
    default: 'timezone',
    schema: queryParamName,
  }),
  CALENDBOOK_TIMEOUT_MS: variable({
    section: 'upstream',
    description: 'Timeout of every upstream request, in milliseconds.',
    default: '10000',
    schema: positiveInt(120_000),
  }),
} as const;
