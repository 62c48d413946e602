// Reading and writing a simulator's state file. Written aside and renamed into place, so a crash mid-write
// leaves the previous state whole; owner-only, because it holds refresh tokens and the key that signs access
// tokens.
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { SimulatorState, WorldIdentity } from './state-format.js';
import { parseState, serializeState, SimulatorStateError } from './state-format.js';

const errorCode = (thrown: unknown) => (thrown as NodeJS.ErrnoException).code;

/** The state kept in `file`, or null when there is none yet (a fresh world); a SimulatorStateError if unusable. */
export async function readStateFile(file: string, expected: WorldIdentity): Promise<SimulatorState | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (thrown: unknown) {
    if (errorCode(thrown) === 'ENOENT') return null;
    throw new SimulatorStateError(
      file,
      `cannot be read (${errorCode(thrown) ?? String(thrown)})`,
      'Make it readable by this user, or move it away to start a fresh simulated world.',
    );
  }
  return parseState(file, text, expected);
}

/** Replaces `file` with `state` in one step; readable and writable by the owner only. */
export async function writeStateFile(file: string, state: SimulatorState): Promise<void> {
  // Serialised before the first await: the file holds the state as it was when the write was asked for.
  const text = serializeState(state);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const aside = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const handle = await open(aside, 'wx', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      // On disk before the rename makes it the state: a power cut must not leave an empty file in its place.
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(aside, file);
  } catch (thrown: unknown) {
    await rm(aside, { force: true });
    throw thrown;
  }
}
