// A feed's options checked on the command line by the feed store's own rules (feeds/feed-options.ts), so a
// value it would refuse is a usage error (exit 2) that names the option, found before the database is opened.
import {
  feedOptionsSchema,
  optionsConflict,
  type FeedOptions,
  type FeedView,
  type TeamMode,
} from '../feeds/feed-options.js';
import { parsedBy, UsageError } from './usage-error.js';

/** `--summary <text>`: what the schema allows (trimmed, 1–100 characters), as the store will check it. */
export const feedSummary = parsedBy((value: string): string => {
  const parsed = feedOptionsSchema.shape.summary.safeParse(value);
  if (!parsed.success || parsed.data === undefined) {
    throw new Error(parsed.error?.issues[0]?.message ?? 'a summary needs some text');
  }
  return parsed.data;
});

/**
 * Refuses each given option that the feed's view (or a team feed's mode) ignores, naming both:
 * `--merge cannot be used with --view free: merge applies to the slots view only (…)`.
 */
export function refuseOptionsIgnoredBy(
  decisive: { view: FeedView } | { mode: TeamMode },
  given: Pick<FeedOptions, 'merge' | 'summary' | 'minimum' | 'days'>,
): void {
  const [decisiveName, decisiveValue] = Object.entries(decisive)[0] as [string, string];
  for (const [name, value] of Object.entries(given)) {
    if (value === undefined) continue;
    const conflict = optionsConflict({ ...decisive, [name]: value });
    if (conflict !== undefined) {
      throw new UsageError(`--${name} cannot be used with --${decisiveName} ${decisiveValue}: ${conflict}`);
    }
  }
}
