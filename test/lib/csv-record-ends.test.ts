// COPY's LF-ended CSV made CRLF-ended, in chunks cut anywhere: only the line feeds that end records change, never
// one inside a quoted field, whichever chunk its quotes fall in.
import { describe, expect, it } from '@jest/globals';
import { createCrlfRecordEnds } from '../../src/lib/csv-record-ends.js';
import { createPrng, type Prng } from '../../src/simulator/prng.js';

/** The CSV field as Postgres writes it: quoted, its quotes doubled, when it holds a comma, quote or line break. */
const field = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);

function randomCsv(random: Prng): { lf: string; crlf: string } {
  const pieces = ['a', 'Zoë', ',', '"', '\n', '\r\n', ' ', '""', '12.5'];
  const records: string[][] = [];
  const count = random.intBetween(1, 6);
  for (let r = 0; r < count; r += 1) {
    const fields: string[] = [];
    for (let f = random.intBetween(1, 4); f > 0; f -= 1) {
      let value = '';
      for (let c = random.intBetween(0, 5); c > 0; c -= 1) value += random.pick(pieces);
      fields.push(field(value));
    }
    records.push(fields);
  }
  const lines = records.map((fields) => fields.join(','));
  return { lf: lines.map((line) => `${line}\n`).join(''), crlf: lines.map((line) => `${line}\r\n`).join('') };
}

/** `text` cut into chunks at random byte offsets (a UTF-8 character may be cut too). */
function chunksOf(text: string, random: Prng): Buffer[] {
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length;) {
    const size = random.intBetween(1, 8);
    chunks.push(bytes.subarray(at, at + size));
    at += size;
  }
  return chunks;
}

describe('createCrlfRecordEnds', () => {
  it('ends each record with CRLF and keeps line breaks inside quoted fields, over 500 random cuts', () => {
    const random = createPrng(44);
    for (let i = 0; i < 500; i += 1) {
      const { lf, crlf } = randomCsv(random);
      const toCrlf = createCrlfRecordEnds();
      const out = Buffer.concat(chunksOf(lf, random).map((chunk) => toCrlf(chunk))).toString('utf8');
      expect(out).toBe(crlf);
    }
  });

  it('keeps a quoted field open from one chunk to the next', () => {
    const toCrlf = createCrlfRecordEnds();
    const out = ['id,"first\n', 'second"\n', 'x,y\n'].map((chunk) => toCrlf(Buffer.from(chunk)).toString());
    expect(out).toEqual(['id,"first\n', 'second"\r\n', 'x,y\r\n']);
  });
});
