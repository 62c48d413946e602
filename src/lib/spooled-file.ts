// Chunks written to a temporary file as fast as they come, then read back at the reader's own pace. For a download
// whose source holds something scarce while it is read: a report's CSV streamed from Postgres holds a pooled
// connection and a snapshot, and its COPY is one statement, so a browser reading slowly would hold both for
// minutes and be cut off by the web role's statement timeout. Spooled, the statement takes as long as Postgres
// needs, and the file is read without it. The file is removed as soon as it is opened (the open file stays
// readable), so no download, finished or not, leaves one behind.
import { createWriteStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** `chunks` read to their end into a temporary file in `dir`; resolves to a stream of the file's bytes. */
export async function spooled(
  chunks: AsyncIterable<Buffer | string>,
  dir: string = tmpdir(),
): Promise<Readable> {
  const folder = await mkdtemp(path.join(dir, 'slotfeed-spool-'));
  try {
    const file = path.join(folder, 'spool');
    await pipeline(Readable.from(chunks), createWriteStream(file));
    const handle = await open(file);
    return handle.createReadStream();
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
