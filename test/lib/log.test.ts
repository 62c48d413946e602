import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { createLogger, redactSecrets, redactText } from '../../src/log.js';

function capturingLogger() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const logger = createLogger({ level: 'info', destination });
  return { logger, output: () => lines.join('') };
}

const secrets = {
  access: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c3JfMSJ9.c2lnbmF0dXJl',
  refresh: 'rt_9f8e7d6c5b4a39281706f5e4d3c2b1a0',
  clientSecret: 'cs_live_0123456789abcdef',
  feed: 'Zk9vYmFyYmF6cXV4eHl6enk0Mg',
  code: 'ac_5e1f0c2b9a',
};

describe('logger redaction', () => {
  it('removes tokens and secrets nested anywhere in a log object', () => {
    const { logger, output } = capturingLogger();
    logger.info(
      {
        request: { headers: { Authorization: `Bearer ${secrets.access}`, accept: 'application/json' } },
        tokens: [{ access_token: secrets.access, refresh_token: secrets.refresh }],
        deep: { a: { b: { c: { clientSecret: secrets.clientSecret, feedToken: secrets.feed } } } },
      },
      'upstream call',
    );
    const text = output();
    for (const secret of Object.values(secrets)) expect(text).not.toContain(secret);
    expect(text).toContain('application/json');
    expect(text).toContain('[redacted]');
  });

  it('masks credentials that appear inside messages, URLs and errors', () => {
    const { logger, output } = capturingLogger();
    logger.info(`GET /feeds/${secrets.feed}.ics`);
    logger.info(
      { url: `https://slotfeed.example/oauth/callback?code=${secrets.code}&state=abc` },
      'callback',
    );
    logger.error({ err: new Error(`upstream said no to Bearer ${secrets.access}`) }, 'failed');
    logger.info({ databaseUrl: 'postgresql://slotfeed:pa55word@db:5432/slotfeed' }, 'connecting');
    const text = output();
    for (const secret of [secrets.feed, secrets.code, secrets.access, 'pa55word'])
      expect(text).not.toContain(secret);
    expect(text).toContain('state=abc');
    expect(text).toContain('db:5432/slotfeed');
  });

  it('keeps ordinary error codes and survives cycles', () => {
    const cyclic: Record<string, unknown> = { code: 'rate_limited' };
    cyclic.self = cyclic;
    expect(redactSecrets(cyclic)).toEqual({ code: 'rate_limited', self: '[circular]' });
  });
});

describe('redactText', () => {
  it('hides the token of a feed path and of a free/busy path, keeping the rest of the line', () => {
    const token = 'Ab_-0123456789abcdefghijklmnopqrstuvwxyzABCD';
    expect(redactText(`GET /feeds/${token}.ics 200`)).toBe('GET /feeds/[redacted].ics 200');
    expect(redactText(`GET /freebusy/${token}.ifb 304`)).toBe('GET /freebusy/[redacted].ifb 304');
  });
});
