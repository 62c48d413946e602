// Feed-token probes for the guessing and timing tests: a timed GET on a keep-alive agent, random and
// near-miss tokens, and the rank statistic the timing comparison rests on.
import http from 'node:http';
import { randomBytes } from 'node:crypto';

export function timedGet(
  agent: http.Agent,
  url: string,
): Promise<{ status: number; body: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const request = http.get(url, { agent, headers: { accept: 'application/json' } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          body,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
        }),
      );
    });
    request.on('error', reject);
  });
}

export const randomToken = () => randomBytes(32).toString('base64url');
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** A real token with one character replaced (at a random position) by another of the alphabet. */
export function nearMiss(token: string): string {
  const at = randomBytes(1)[0]! % token.length;
  const current = ALPHABET.indexOf(token[at]!);
  const replacement = ALPHABET[(current + 1 + (randomBytes(1)[0]! % 63)) % 64]!;
  return token.slice(0, at) + replacement + token.slice(at + 1);
}

/** P(a > b) + ½·P(a = b) over all pairs: the Mann–Whitney U statistic scaled to 0…1 (0.5 = no gap). */
export function probabilityOfSuperiority(a: number[], b: number[]): number {
  const all = [...a.map((v) => ({ v, fromA: true })), ...b.map((v) => ({ v, fromA: false }))].sort(
    (x, y) => x.v - y.v,
  );
  let rankSumA = 0;
  for (let i = 0; i < all.length;) {
    let j = i;
    while (j < all.length && all[j]!.v === all[i]!.v) j++;
    const averageRank = (i + 1 + j) / 2;
    for (let k = i; k < j; k++) if (all[k]!.fromA) rankSumA += averageRank;
    i = j;
  }
  const u = rankSumA - (a.length * (a.length + 1)) / 2;
  return u / (a.length * b.length);
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)]!;
};
