// How slotfeed reads the DAV properties tsdav hands back: a calendar collection's URL, name and whether it takes
// events, and a property's text however tsdav's XML reading left it. Shared by the account and its discovery.
import type { DAVResponse } from 'tsdav';
import { CalDavError } from './errors.js';

export interface CalDavCalendar {
  /** The collection's absolute URL, ending in '/'. */
  url: string;
  displayName: string;
  /** Whether its supported-calendar-component-set admits VEVENT (a calendar that names none admits all). */
  acceptsEvents: boolean;
}

export const withSlash = (url: string) => (url.endsWith('/') ? url : `${url}/`);

/** A DAV property's text as tsdav's XML reading leaves it: a string, a number, or a CDATA/text object. */
export function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value && typeof value === 'object') {
    const node = value as { _cdata?: unknown; _text?: unknown };
    if (typeof node._cdata === 'string') return node._cdata;
    if (typeof node._text === 'string' || typeof node._text === 'number') return String(node._text);
  }
  return undefined;
}

function componentNames(set: unknown): string[] {
  const comp = (set as { comp?: unknown } | undefined)?.comp;
  const comps = Array.isArray(comp) ? comp : comp === undefined ? [] : [comp];
  return comps
    .map((c) => (c as { _attributes?: { name?: unknown } } | undefined)?._attributes?.name)
    .filter((name): name is string => typeof name === 'string');
}

export function isCalendar(response: DAVResponse): boolean {
  return Object.keys(response.props?.resourcetype ?? {}).includes('calendar');
}

export function calendarOf(response: DAVResponse, requestUrl: string): CalDavCalendar {
  const url = withSlash(new URL(response.href ?? requestUrl, requestUrl).href);
  const segment = decodeURIComponent(new URL(url).pathname.split('/').filter(Boolean).at(-1) ?? '');
  const components = componentNames(response.props?.supportedCalendarComponentSet);
  return {
    url,
    displayName: textOf(response.props?.displayname)?.trim() || segment,
    acceptsEvents: components.length === 0 || components.includes('VEVENT'),
  };
}

export const CALENDAR_PROPS = {
  'd:resourcetype': {},
  'd:displayname': {},
  'c:supported-calendar-component-set': {},
};

/** An error tsdav made itself (no href where one belongs, a failed item): said in our terms, none of its text. */
export function asCalDavError(thrown: unknown, otherwise: () => CalDavError): CalDavError {
  return thrown instanceof CalDavError ? thrown : otherwise();
}
