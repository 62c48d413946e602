import { describe, expect, it } from '@jest/globals';
import { describeFeed, describeInterval, feedCalendarName } from '../../src/feeds/describe-feed.js';

const base = {
  displayName: 'Linus Turing',
  status: 'active' as const,
  feedChangedAt: new Date('2026-03-02T09:15:00Z'),
  lastSyncOutcome: 'succeeded' as const,
  zone: 'Europe/Berlin',
  refreshIntervalSeconds: 900,
};

describe('describeFeed', () => {
  it('says whose free time it is, when the data changed (in their zone) and how often it refreshes', () => {
    expect(describeFeed(base)).toBe(
      'Free time of Linus Turing, from Calendbook. Data as of 2026-03-02 10:15 (Europe/Berlin); ' +
        'refreshed about every 15 minutes.',
    );
  });

  it('asks for re-authorisation when the account needs it', () => {
    expect(describeFeed({ ...base, status: 'needs_reauth' })).toBe(
      'Free time of Linus Turing, from Calendbook. Data as of 2026-03-02 10:15 (Europe/Berlin); ' +
        'refreshed about every 15 minutes. The account needs re-authorisation: reconnect it to keep this ' +
        'feed current.',
    );
  });

  it('does not depend on the last sync outcome, which does not move the feed version', () => {
    expect(describeFeed({ ...base, lastSyncOutcome: 'failed' })).toBe(describeFeed(base));
    expect(describeFeed({ ...base, lastSyncOutcome: null })).toBe(describeFeed(base));
  });

  it('falls back to UTC for an unknown or invalid zone, and copes with no name and no data yet', () => {
    expect(describeFeed({ ...base, zone: null })).toContain('Data as of 2026-03-02 09:15 (UTC)');
    expect(describeFeed({ ...base, zone: 'Mars/Olympus_Mons' })).toContain('(UTC)');
    expect(describeFeed({ ...base, zone: 'Asia/Kolkata' })).toContain('2026-03-02 14:45 (Asia/Kolkata)');
    expect(describeFeed({ ...base, displayName: null, feedChangedAt: null })).toBe(
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
