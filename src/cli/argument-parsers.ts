// Parsers for commander arguments and options: a bad value is a usage error (exit 2) that says what to give.
import { InvalidArgumentError } from 'commander';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function wholeNumber(min: number, max: number) {
  return (value: string): number => {
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}, got "${value}"`);
    }
    return parsed;
  };
}

/** `what`: "connection" or "feed"; the message says where such ids are listed. */
/** The command that lists each kind of id. */
const LISTED_BY = {
  connection: 'connections',
  feed: 'feeds',
  'API key': 'api-keys',
  'webhook endpoint': 'webhooks',
  'CalDAV destination': 'destinations',
  'share link': 'share-links',
} as const;

export function uuidOf(what: keyof typeof LISTED_BY) {
  return (value: string): string => {
    if (!UUID.test(value)) {
      throw new InvalidArgumentError(
        `not a ${what} id: "${value}" (see \`slotfeed ${LISTED_BY[what]} list\`)`,
      );
    }
    return value;
  };
}

export const OUTPUT_FORMATS = ['table', 'json'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
