// A download spooled to a temporary file: read back whole, no file left behind, and when the file cannot be written
// the chunks are given up at once (a report's export would otherwise keep its database connection for good).
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spooled } from '../../src/lib/spooled-file.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'spool-test-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Chunks that record whether they were given up (`return`) before their end. */
function recordedChunks(parts: string[]): AsyncIterableIterator<Buffer> & { givenUp: boolean } {
  let index = 0;
  const chunks = {
    givenUp: false,
    [Symbol.asyncIterator]() {
      return chunks;
    },
    async next(): Promise<IteratorResult<Buffer>> {
      const part = parts[index++];
      return part === undefined
        ? { done: true, value: undefined }
        : { done: false, value: Buffer.from(part) };
    },
    async return(): Promise<IteratorResult<Buffer>> {
      if (index < parts.length) chunks.givenUp = true;
      return { done: true, value: undefined };
    },
  };
  return chunks;
}

async function text(stream: AsyncIterable<unknown>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

describe('spooled', () => {
  it('reads back what was written, and leaves no file behind', async () => {
    const parts = ['connection_id,day\r\n', 'a,2026-01-01\r\n', 'Zoë,2026-01-02\r\n'];
    const file = await spooled(recordedChunks(parts), dir);
    expect(await readdir(dir)).toEqual([]);
    expect(await text(file)).toBe(parts.join(''));
  });

  it('gives the chunks up when there is nowhere to write them', async () => {
    const chunks = recordedChunks(['a\r\n', 'b\r\n']);
    await expect(spooled(chunks, path.join(dir, 'no-such-folder'))).rejects.toThrow(/ENOENT/);
    expect(chunks.givenUp).toBe(true);
  });
});
