// The log of a Postgres outage as the feed route sees it: one warning however many polls fail, one info line
// once polls have been answered normally for OUTAGE_SETTLE_MS (on the injected clock), and no pair of lines
// per flip while failures and successes interleave.
import { Writable } from 'node:stream';
import { beforeEach, describe, expect, it } from '@jest/globals';
import { createLogger } from '../../src/log.js';
import {
  createDatabaseOutage,
  OUTAGE_SETTLE_MS,
  type DatabaseOutage,
  type OutageAnswerKind,
} from '../../src/web/feeds/database-outage.js';
import { FakeClock } from '../support/sync-harness.js';

let lines: { level: number; msg: string; [key: string]: unknown }[];
let counted: OutageAnswerKind[];
let clock: FakeClock;
let outage: DatabaseOutage;

beforeEach(() => {
  lines = [];
  counted = [];
  clock = new FakeClock(new Date('2026-03-02T09:00:00Z'));
  const logger = createLogger({
    level: 'debug',
    destination: new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString('utf8')) as (typeof lines)[number]);
        done();
      },
    }),
  });
  outage = createDatabaseOutage({
    logger,
    now: clock.now,
    graceSeconds: 21_600,
    countAnswer: (answer) => counted.push(answer),
  });
});

/** One poll that found Postgres unable to answer. */
function failedPoll(answer: OutageAnswerKind = 'last_good') {
  outage.unreachable('unreachable');
  outage.answered(answer);
}

describe('one outage', () => {
  it('logs one warning however many polls fail, and counts every answer', () => {
    for (let i = 0; i < 500; i += 1) failedPoll(i % 10 === 0 ? 'unavailable' : 'last_good');
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, reason: 'unreachable', graceSeconds: 21_600 }),
    ]);
    expect(counted).toHaveLength(500);
  });

  it('ends with one info line once polls have been answered normally for the settling time', () => {
    failedPoll();
    clock.advance(90);
    failedPoll('unavailable');
    failedPoll('gone');
    outage.reachable();
    clock.advance(OUTAGE_SETTLE_MS / 1000 - 1);
    outage.reachable();
    expect(lines).toHaveLength(1);
    clock.advance(1);
    outage.reachable();
    outage.reachable();
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({
      level: 30,
      msg: 'Postgres answers feed requests again',
      outageSeconds: 90,
      servedFromMemory: 1,
      answeredGone: 1,
      answeredUnavailable: 1,
    });
  });

  it('logs nothing while failures and successes interleave, and nothing when there was no outage', () => {
    outage.reachable();
    expect(lines).toEqual([]);
    failedPoll();
    for (let i = 0; i < 100; i += 1) {
      outage.reachable();
      clock.advance(OUTAGE_SETTLE_MS / 1000 / 2);
      failedPoll();
    }
    expect(lines.map((line) => line.level)).toEqual([40]);
  });

  it('warns again for the next outage', () => {
    failedPoll();
    outage.reachable();
    clock.advance(OUTAGE_SETTLE_MS / 1000);
    outage.reachable();
    failedPoll();
    expect(lines.map((line) => line.level)).toEqual([40, 30, 40]);
  });
});
