// The scheduling service: its API, its OAuth client, and the two query parameters its description is silent on.
import { z } from 'zod';
import { httpUrl, positiveInt } from './value-schemas.js';
import { section, variable } from './variable.js';

const queryParamName = z.string().regex(/^[A-Za-z0-9_.-]+$/, 'must be a plain query parameter name');

export const upstreamSection = section({
  variables: {
    baseUrl: variable({
      name: 'CALENDBOOK_BASE_URL',
      description:
        'Base URL of the scheduling service API (`/events`, `/users/me`, `/calendars/…` hang below it).',
      schema: httpUrl,
    }),
    authUrl: variable({
      name: 'CALENDBOOK_AUTH_URL',
      description: 'Base URL of its OAuth 2.0 authorization server (`/login`, `/oauth2/token`).',
      schema: httpUrl,
    }),
    clientId: variable({
      name: 'CALENDBOOK_CLIENT_ID',
      description: 'OAuth client id from the partner portal.',
      schema: z.string().min(1),
    }),
    clientSecret: variable({
      name: 'CALENDBOOK_CLIENT_SECRET',
      description: 'OAuth client secret from the partner portal.',
      secret: true,
      schema: z.string().min(1),
    }),
    redirectUri: variable({
      name: 'CALENDBOOK_REDIRECT_URI',
      description:
        "Redirect URI registered in the portal; slotfeed's `/oauth/callback` as users' browsers reach it.",
      schema: httpUrl,
    }),
    scope: variable({
      name: 'CALENDBOOK_SCOPE',
      description: 'Scopes requested at authorization (space-separated); empty requests the default scopes.',
      default: '',
      schema: z.string(),
    }),
    slotsQuery: {
      dateParam: variable({
        name: 'CALENDBOOK_SLOTS_DATE_PARAM',
        description:
          'Query parameter that carries the date of `GET /calendars/{id}/slots` (the API description is silent).',
        default: 'date',
        schema: queryParamName,
      }),
      timezoneParam: variable({
        name: 'CALENDBOOK_SLOTS_TIMEZONE_PARAM',
        description: 'Query parameter that carries the time zone of `GET /calendars/{id}/slots`.',
        default: 'timezone',
        schema: queryParamName,
      }),
    },
    timeoutMs: variable({
      name: 'CALENDBOOK_TIMEOUT_MS',
      description: 'Timeout of every upstream request, in milliseconds.',
      default: '10000',
      schema: positiveInt(120_000),
    }),
  },
});
