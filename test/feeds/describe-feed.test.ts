import { describe, expect, it } from '@jest/globals';
import { describeFeed, describeInterval, feedCalendarName } from '../../src/feeds/describe-feed.js';

const connection = {
  displayName: 'Linus Turing' as string | null,
  status: 'active' as 'active' | 'needs_reauth' | 'disabled',
  feedChangedAt: new Date('2026-03-02T09:15:00Z') as Date | null,
  timezone: 'Europe/Berlin' as string | null,
};
const base = { connection, view: 'free' as const, refreshIntervalSeconds: 900 };
const withConnection = (changes: Partial<typeof connection>) => ({
  ...base,
  connection: { ...connection, ...changes },
});

describe('describeFeed', () => {
  it('says whose free time it is, when it last changed (in their zone) and how often it refreshes', () => {
    expect(describeFeed(base)).toBe(
      'Free time of Linus Turing, from Calendbook. Last changed 2026-03-02 10:15 (Europe/Berlin); ' +
        'refreshed about every 15 minutes.',
    );
  });

  it('says bookable times for the slots view', () => {
    expect(describeFeed({ ...base, view: 'slots' })).toMatch(
      /^Bookable times of Linus Turing, from Calendbook\./,
    );
  });

  it('asks for re-authorisation when the account needs it', () => {
    expect(describeFeed(withConnection({ status: 'needs_reauth' }))).toBe(
      'Free time of Linus Turing, from Calendbook. Last changed 2026-03-02 10:15 (Europe/Berlin); ' +
        'refreshed about every 15 minutes. The account needs re-authorisation: reconnect it to keep this ' +
        'feed current.',
    );
  });

  it('says a disabled connection is no longer updated, instead of promising refreshes', () => {
    const text = describeFeed(withConnection({ status: 'disabled' }));
    expect(text).toContain('this feed is no longer updated');
    expect(text).not.toContain('refreshed about');
  });

  it('falls back to UTC for an unknown or invalid zone, and copes with no name and no data yet', () => {
    expect(describeFeed(withConnection({ timezone: null }))).toContain('Last changed 2026-03-02 09:15 (UTC)');
    expect(describeFeed(withConnection({ timezone: 'Mars/Olympus_Mons' }))).toContain('(UTC)');
    expect(describeFeed(withConnection({ timezone: 'Asia/Kolkata' }))).toContain(
      '2026-03-02 14:45 (Asia/Kolkata)',
    );
    expect(describeFeed(withConnection({ displayName: null, feedChangedAt: null }))).toBe(
      'Free time, from Calendbook. No data synced yet; refreshed about every 15 minutes.',
    );
  });
});

describe('describeInterval', () => {
  it.each([
    [30, 'every minute'],
    [60, 'every minute'],
    [900, 'every 15 minutes'],
    [3600, 'every hour'],
    [5400, 'every 90 minutes'],
    [7200, 'every 2 hours'],
  ])('%d s → %s', (seconds, phrase) => {
    expect(describeInterval(seconds)).toBe(phrase);
  });
});

describe('feedCalendarName', () => {
  it('names the person, or their e-mail, and the event type of a one-event feed', () => {
    expect(feedCalendarName({ displayName: 'Linus Turing', email: 'l@example.test' })).toBe(
      'Linus Turing – free time',
    );
    expect(feedCalendarName({ displayName: ' ', email: 'l@example.test', eventTitle: 'Intro call' })).toBe(
      'l@example.test – Intro call (free time)',
    );
    expect(feedCalendarName({ displayName: null, email: null })).toBe('Calendbook – free time');
  });
});
