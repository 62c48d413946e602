// The log of repeated errors: identical errors from any source make one line per interval, with the count of
// those held back; different errors are not merged; a recovery is one line. Time is a number the test moves.
import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { createLogger } from '../../src/log.js';
import { createRepeatedErrorLog } from '../../src/lib/repeated-errors.js';

function capture(intervalMs = 60_000) {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  let clock = 1_000_000;
  const log = createRepeatedErrorLog(createLogger({ level: 'info', destination }), {
    intervalMs,
    now: () => clock,
  });
  return { log, lines, advance: (ms: number) => (clock += ms) };
}

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });

describe('repeated error log', () => {
  it('logs the first of identical errors at once and the rest once per interval, with their count', () => {
    const { log, lines, advance } = capture();
    for (let i = 0; i < 1000; i++) {
      log.report(i % 2 === 0 ? 'redis slotfeed' : 'sync worker', refused());
      advance(10);
    }
    // 1,000 errors over 10 s: one line.
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, source: 'redis slotfeed' });
    expect(lines[0]!.repeated).toBeUndefined();
    advance(50_000);
    log.report('sync worker', refused());
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ source: 'sync worker', repeated: 999 });
    expect(new Set(lines[1]!.repeatedFrom as string[])).toEqual(new Set(['redis slotfeed', 'sync worker']));
    expect(lines[1]!.msg).toContain('and 999 more like it');
  });

  it('keeps different errors apart', () => {
    const { log, lines } = capture();
    log.report('tick worker', refused());
    log.report('tick worker', new Error("OOM command not allowed when used memory > 'maxmemory'."));
    log.report('tick worker', refused());
    expect(lines.map((line) => (line.err as { message: string }).message)).toEqual([
      'connect ECONNREFUSED 127.0.0.1:6379',
      "OOM command not allowed when used memory > 'maxmemory'.",
    ]);
  });

  it('says once when a failing source works again, and nothing for one that never failed', () => {
    const { log, lines, advance } = capture();
    log.recovered('redis slotfeed');
    expect(lines).toHaveLength(0);
    for (let i = 0; i < 5; i++) {
      log.report('redis slotfeed', refused());
      advance(1000);
    }
    log.recovered('redis slotfeed');
    log.recovered('redis slotfeed');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ level: 30, source: 'redis slotfeed', errors: 5, failingSeconds: 5 });
  });
});

describe('repeated error log, what a line carries', () => {
  it('names the failed Redis command without its arguments', () => {
    const { log, lines } = capture();
    const error = Object.assign(new Error("OOM command not allowed when used memory > 'maxmemory'."), {
      name: 'ReplyError',
      command: { name: 'evalsha', args: ['sha', '2', 'k1', '{"codeVerifier":"secret-verifier-value"}'] },
    });
    log.report('sync queue', error);
    expect(lines[0]).toMatchObject({ command: 'evalsha', err: { message: error.message } });
    expect(JSON.stringify(lines[0])).not.toContain('secret-verifier-value');
  });
});
