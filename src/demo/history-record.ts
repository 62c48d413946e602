// How far a demo's history got, kept in the data directory (`history.json`), so that a history stopped half
// way (Ctrl-C during "Recording the history", a round that hung) is finished by the next run instead of being
// kept half done for good. Written when a fresh history is planned, after every sync round and at the end.
import { readFile, rename, writeFile } from 'node:fs/promises';
import { z } from 'zod';

const recordSchema = z.object({
  startsAt: z.iso.datetime(),
  stepMs: z.number().int().positive(),
  syncsPerDay: z.number().int().positive(),
  days: z.number().int().positive(),
  /** Sync rounds recorded, the accounts' first syncs included. */
  roundsDone: z.number().int().min(0),
  finished: z.boolean(),
});

export type HistoryRecord = z.infer<typeof recordSchema>;

/** The record in `file`; undefined when there is none or it cannot be read (a history is then kept as is). */
export async function readHistoryRecord(file: string): Promise<HistoryRecord | undefined> {
  try {
    return recordSchema.parse(JSON.parse(await readFile(file, 'utf8')));
  } catch {
    return undefined;
  }
}

export async function writeHistoryRecord(file: string, record: HistoryRecord): Promise<void> {
  // Through a temporary file: a stop in mid-write leaves the last whole record.
  const temporary = `${file}.tmp`;
  await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`);
  await rename(temporary, file);
}
