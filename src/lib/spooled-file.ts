// Chunks written to a temporary file as fast as they come, then read back at the reader's own pace. For a download
// whose source holds something scarce while it is read: a report's CSV streamed from Postgres holds a pooled
// connection and a snapshot until it is read to its end, so a browser reading slowly would hold both for as long
// as it took. Spooled, Postgres's statement takes as long as Postgres needs, and the file is read without it. The
// file is removed as soon as it is opened (the open file stays readable): a download, finished or not, leaves none
// behind, unless the process dies while writing it.
import { createWriteStream } from 'node:fs';
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * `chunks` read to their end into a temporary file in `dir`; resolves to a stream of the file's bytes. Should the
 * file not be written (no room, no folder), `chunks` are given up (their `return`), so that what they hold is let
 * go at once.
 */
export async function spooled(
  chunks: AsyncIterable<Buffer | string>,
  dir: string = tmpdir(),
): Promise<Readable> {
  const iterator = chunks[Symbol.asyncIterator]();
  let folder: string | undefined;
  let handle: FileHandle | undefined;
  try {
    folder = await mkdtemp(path.join(dir, 'slotfeed-spool-'));
    const file = path.join(folder, 'spool');
    await pipeline(Readable.from({ [Symbol.asyncIterator]: () => iterator }), createWriteStream(file));
    handle = await open(file);
    await rm(folder, { recursive: true, force: true });
    return handle.createReadStream();
  } catch (thrown: unknown) {
    await iterator.return?.();
    await handle?.close();
    if (folder !== undefined) await rm(folder, { recursive: true, force: true });
    throw thrown;
  }
}
