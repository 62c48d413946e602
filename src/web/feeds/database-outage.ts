// One Postgres outage as the feed route lives it: a warning when the first poll finds the database unable to
// answer, one info line once polls have been answered normally again for a minute (how long it lasted, how the
// polls meanwhile were answered), and nothing per poll in between. Calendar apps poll around the clock, so a line
// (let alone a stack trace) per poll would bury the one line an operator needs; the polls are counted in a
// metric instead.
//
// The minute of settling is there because failures and successes interleave at the edges of an outage (polls
// in flight while Postgres starts; one locked table timing out while other reads succeed): without it, every
// flip would log a warning and an info line.

/** How long polls must keep being answered normally, with no failure between, before the outage is over. */
export const OUTAGE_SETTLE_MS = 60_000;

export type OutageAnswerKind = 'last_good' | 'gone' | 'unavailable';

export interface OutageLogger {
  info(details: Record<string, unknown>, message: string): void;
  warn(details: Record<string, unknown>, message: string): void;
}

export interface DatabaseOutage {
  /** A poll found Postgres unable to answer (`reason` is short: 'DatabaseNotReachable', 'postgres 57P01'). */
  unreachable(reason: string): void;
  /** How that poll was answered. */
  answered(answer: OutageAnswerKind): void;
  /** A poll was answered normally: ends the outage under way once that has lasted OUTAGE_SETTLE_MS. */
  reachable(): void;
}

export function createDatabaseOutage(options: {
  logger: OutageLogger;
  now: () => Date;
  /** FEED_OUTAGE_GRACE_SECONDS, repeated in the warning so the reader knows how long memory will last. */
  graceSeconds: number;
  /** Counts every answer given during an outage (the metric). */
  countAnswer: (answer: OutageAnswerKind) => void;
}): DatabaseOutage {
  let current:
    | { startedAt: Date; answers: Record<OutageAnswerKind, number>; answeringSince: Date | undefined }
    | undefined;

  return {
    unreachable(reason) {
      if (current !== undefined) {
        current.answeringSince = undefined;
        return;
      }
      current = {
        startedAt: options.now(),
        answers: { last_good: 0, gone: 0, unavailable: 0 },
        answeringSince: undefined,
      };
      options.logger.warn(
        { reason, graceSeconds: options.graceSeconds },
        'Postgres does not answer: feeds this process served are answered from memory, others with 503, until it is back',
      );
    },

    answered(answer) {
      options.countAnswer(answer);
      if (current !== undefined) current.answers[answer] += 1;
    },

    reachable() {
      if (current === undefined) return;
      const at = options.now();
      current.answeringSince ??= at;
      if (at.getTime() - current.answeringSince.getTime() < OUTAGE_SETTLE_MS) return;
      const { startedAt, answers, answeringSince } = current;
      current = undefined;
      options.logger.info(
        {
          outageSeconds: Math.round((answeringSince.getTime() - startedAt.getTime()) / 1000),
          servedFromMemory: answers.last_good,
          answeredGone: answers.gone,
          answeredUnavailable: answers.unavailable,
        },
        'Postgres answers feed requests again',
      );
    },
  };
}
