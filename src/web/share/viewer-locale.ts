// The language a share page writes its days and times in: the viewer's, from Accept-Language (ordered by its
// q-values with the negotiator package), as Intl formats it (Node carries every locale's data). A viewer in the
// US reads "Fri, Dec 11" and "9:00 AM", one in Germany "Fr., 11. Dez." and "09:00". Without the header, or with
// none Intl knows, it is en-GB: "Fri 11 Dec", "09:00", as the page read before it followed the viewer.
import Negotiator from 'negotiator';
import type { DateTime } from 'luxon';

export const DEFAULT_LOCALE = 'en-GB';

/** How many of the header's languages are tried: a header is the client's to make as long as it likes. */
const LANGUAGES_TRIED = 8;

export function viewerLocale(acceptLanguage: string | undefined): string {
  if (!acceptLanguage) return DEFAULT_LOCALE;
  const languages = new Negotiator({ headers: { 'accept-language': acceptLanguage } }).languages();
  for (const tag of languages.slice(0, LANGUAGES_TRIED)) {
    if (tag === '*' || tag.length > 35) continue;
    try {
      const [supported] = Intl.DateTimeFormat.supportedLocalesOf([tag]);
      if (supported !== undefined) return Intl.getCanonicalLocales(supported)[0] ?? DEFAULT_LOCALE;
    } catch {
      // Not a language tag (Intl throws a RangeError): the next one, or the default.
    }
  }
  return DEFAULT_LOCALE;
}

const DAY = { weekday: 'short', day: 'numeric', month: 'short' } as const;
/** The language's own short time: "04:30" in en-GB and de-DE, "4:30 AM" in en-US, "4:30" in ja-JP. */
const TIME = { timeStyle: 'short' } as const;
const WEEKDAY = { weekday: 'short' } as const;
const DATE_AND_TIME = { dateStyle: 'medium', timeStyle: 'short' } as const;

/** Day and time words in one locale. */
export interface LocalWords {
  locale: string;
  /** "Fri 11 Dec", "Fri, Dec 11", "12月11日(金)". */
  day(at: DateTime): string;
  /** "22:00", "10:00 PM". */
  time(at: DateTime): string;
  /** A time on another day than the one it is listed under: "Sat 06:00", "Sat 6:00 AM". */
  dayAndTime(at: DateTime): string;
  /** The end of a day: "24:00" where clocks run to 24 hours, else as the next day's first minute ("12:00 AM"). */
  endOfDay(at: DateTime): string;
  /** "11 Dec 2026, 22:00". */
  dateAndTime(at: DateTime): string;
}

export function localWords(locale: string): LocalWords {
  const twentyFourHours = ['h23', 'h24'].includes(
    new Intl.DateTimeFormat(locale, { hour: 'numeric' }).resolvedOptions().hourCycle ?? 'h23',
  );
  const time = (at: DateTime) => at.setLocale(locale).toLocaleString(TIME);
  return {
    locale,
    day: (at) => at.setLocale(locale).toLocaleString(DAY),
    time,
    // Intl cannot join a weekday to timeStyle in one format.
    dayAndTime: (at) => `${at.setLocale(locale).toLocaleString(WEEKDAY)} ${time(at)}`,
    endOfDay: (at) => (twentyFourHours ? '24:00' : time(at)),
    dateAndTime: (at) => at.setLocale(locale).toLocaleString(DATE_AND_TIME),
  };
}
