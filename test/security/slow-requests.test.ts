// Slow senders: bodies trickled a byte at a time, and headers that never end (slowloris). Before
// WEB_REQUEST_TIMEOUT_MS, 300 bodies trickled at a byte per 5 s still held their sockets after 150 s. Now a
// request not received whole within the timeout gets 408 and its connection is closed, while everyone else
// is served as usual. Each test waits for the server to close the sockets, not for time to pass.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';

const REQUEST_TIMEOUT_MS = 500;
const SENDERS = 50;
/** Bytes a sender gets out, one a tick of 20 ms, before the cut: 4× the timeout's ticks. */
const MOST_TICKS_BEFORE_CUT = (REQUEST_TIMEOUT_MS / 20) * 4;

let h: WebHarness;

beforeAll(async () => {
  // Each sender comes from an address of its own (through the loopback "proxy"), so the sign-in form's rate
  // limit does not answer them first.
  h = await createWebHarness('sec_slow', {
    webEnv: { WEB_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS), TRUST_PROXY: '127.0.0.1' },
  });
});
afterAll(async () => {
  await h?.close();
});

interface Cut {
  /** What the server wrote before closing. */
  answer: string;
  /** From the first byte sent to the server closing the connection. */
  ms: number;
  /** Bytes the sender got out before it was cut off. */
  sent: number;
}

/** Opens a connection, sends `head`, then one byte of `trickle` every 20 ms until the server closes it. */
function slowSender(head: string, trickle: string): Promise<Cut> {
  const { port } = new URL(h.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    let started = 0;
    socket.on('connect', () => {
      started = Date.now();
      socket.write(head);
      timer = setInterval(() => {
        if (socket.writable) socket.write(trickle[sent++ % trickle.length]!);
      }, 20);
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ answer: Buffer.concat(chunks).toString('utf8'), ms: Date.now() - started, sent });
    });
    socket.setTimeout(30_000, () => {
      clearInterval(timer);
      socket.destroy();
      reject(new Error('the server never closed a slow request'));
    });
  });
}

describe('a request not received whole within WEB_REQUEST_TIMEOUT_MS', () => {
  it(`cuts ${SENDERS} trickled bodies with 408, and serves others meanwhile`, async () => {
    const head = (i: number) =>
      'POST /admin/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n' +
      `X-Forwarded-For: 198.18.1.${i}\r\nContent-Length: 4000\r\n\r\n`;
    const senders = Array.from({ length: SENDERS }, (_, i) => slowSender(head(i), 'token=aaaaaaaaaaaaaaaa'));
    // Served while the slow ones hold their sockets.
    expect((await h.get('/healthz')).status).toBe(200);
    const cuts = await Promise.all(senders);
    for (const cut of cuts) {
      expect(cut.answer).toMatch(/^HTTP\/1\.1 408 /);
      // Never before the timeout; and soon after it, counted in the sender's own ticks (a byte each 20 ms) rather
      // than in wall time, which a loaded machine stretches for the sender and the server alike: the timeout and
      // a check interval are some 30 ticks, the whole body 4,000.
      expect(cut.ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
      expect(cut.sent).toBeLessThan(MOST_TICKS_BEFORE_CUT);
    }
    expect((await h.get('/healthz')).status).toBe(200);
  });

  it('cuts headers that never end (slowloris) the same way', async () => {
    const cut = await slowSender('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n', 'X-Padding: 0123456789\r\n');
    expect(cut.answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(cut.ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(cut.sent).toBeLessThan(MOST_TICKS_BEFORE_CUT);
  });
});
