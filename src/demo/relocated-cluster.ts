// Where the embedded cluster lives when the postgres user cannot reach the directory asked for (a project under
// /root): a directory of its own under the staging root, recorded in a small file beside the one asked for
// (`.slotfeed/postgres.moved-to`). The record belongs to the checkout, like the demo's secrets beside it: a
// checkout moved elsewhere takes it along and keeps its database; a fresh clone in the same place has neither,
// and gets a new cluster, created with its own new password. Keying the cluster by the project's path alone
// handed a fresh clone the old cluster, whose password went away with the old checkout.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';

export function relocationRecordOf(dataDir: string): string {
  return `${path.resolve(dataDir)}.moved-to`;
}

/** The cluster directory recorded for `dataDir`, or null when it has none (or an unreadable record). */
export async function recordedRelocation(dataDir: string): Promise<string | null> {
  const text = await readFile(relocationRecordOf(dataDir), 'utf8').catch(() => null);
  const recorded = text?.trim() ?? '';
  return path.isAbsolute(recorded) ? recorded : null;
}

/** The cluster directory recorded for `dataDir`; when there is none, a new one under `stagingRoot`, recorded. */
export async function relocatedDataDir(dataDir: string, stagingRoot: string): Promise<string> {
  const recorded = await recordedRelocation(dataDir);
  if (recorded !== null) return recorded;
  // The path's digest tells an operator which clusters came from the same place; the random part keeps a new
  // clone's cluster apart from what an earlier checkout there left behind.
  const digest = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 12);
  const cluster = path.join(stagingRoot, 'data', `${digest}-${randomBytes(4).toString('hex')}`);
  const record = relocationRecordOf(dataDir);
  await mkdir(path.dirname(record), { recursive: true });
  // Written aside and renamed, so an interrupted run never leaves half a path behind.
  const partial = `${record}.${process.pid}.tmp`;
  await writeFile(partial, `${cluster}\n`);
  await rename(partial, record);
  return cluster;
}
