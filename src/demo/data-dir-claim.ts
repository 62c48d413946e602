// One demo a data directory. Its Postgres cluster, Radicale calendars and recorded ports are the demo's own, so a
// second demo started on the same folder is refused with who runs there and how to stop it; and the servers of
// a demo that died without stopping them (SIGKILL, a crash) are stopped by the next one, which then starts its
// own in their place: the person never has to hunt for a left-over pid.
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  isAlive,
  isDemoCommand,
  processesMentioning,
  processInfo,
  type ProcessInfo,
} from './process-table.js';

interface OwnerRecord {
  pid: number;
  webUrl?: string;
}

export class DemoAlreadyRunningError extends Error {}

export interface DataDirClaim {
  /** The servers of a dead demo that were stopped, to say so. */
  stoppedLeftovers: ProcessInfo[];
  /** Records where this demo serves, for a second start to say. */
  recordWebUrl(url: string): Promise<void>;
  /** Gives the folder up (the record is removed only while it is this process's). Safe to call twice. */
  release(): Promise<void>;
}

/** The servers the demo starts; each names the data directory on its command line. */
const DEMO_SERVERS = /\b(postgres|radicale|xandikos|redis-server)\b/;
const STOP_GRACE_MS = 10_000;

async function readOwner(file: string): Promise<OwnerRecord | undefined> {
  try {
    const record = JSON.parse(await readFile(file, 'utf8')) as Partial<OwnerRecord>;
    return typeof record.pid === 'number' ? { pid: record.pid, webUrl: record.webUrl } : undefined;
  } catch {
    return undefined;
  }
}

async function writeOwner(file: string, record: OwnerRecord): Promise<void> {
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, `${JSON.stringify(record)}\n`);
  await rename(partial, file);
}

/** A live demo process that owns the folder: not a pid reused by something else since. */
async function liveDemo(record: OwnerRecord | undefined): Promise<ProcessInfo | undefined> {
  if (record === undefined || record.pid === process.pid || !isAlive(record.pid)) return undefined;
  const info = await processInfo(record.pid);
  return info !== undefined && isDemoCommand(info.command) ? info : undefined;
}

export function alreadyRunningMessage(dataDir: string, record: OwnerRecord): string {
  const where = record.webUrl === undefined ? '' : `, web on ${record.webUrl}`;
  return (
    `A slotfeed demo is already running on this data folder (pid ${record.pid}${where}, data in ${dataDir}). ` +
    `Stop it with Ctrl-C in its terminal, or \`kill ${record.pid}\`; or give this one a folder of its own ` +
    '(SLOTFEED_DATA_DIR=/some/other/folder npm run demo).'
  );
}

/** SIGINT for a postmaster (its fast shutdown), SIGTERM for the others; SIGKILL after the grace. */
async function stopLeftover(server: ProcessInfo): Promise<void> {
  const signal = /\bpostgres\b/.test(server.command) ? 'SIGINT' : 'SIGTERM';
  try {
    process.kill(server.pid, signal);
  } catch {
    return;
  }
  const deadline = performance.now() + STOP_GRACE_MS;
  while (isAlive(server.pid)) {
    if (performance.now() > deadline) {
      try {
        process.kill(server.pid, 'SIGKILL');
      } catch {
        return;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Claims `dataDir` for this demo: refused (DemoAlreadyRunningError) while another demo runs on it; otherwise the
 * servers a dead demo left there are stopped first.
 */
export async function claimDataDir(dataDir: string): Promise<DataDirClaim> {
  await mkdir(dataDir, { recursive: true });
  const file = path.join(dataDir, 'demo.pid');
  const earlier = await readOwner(file);
  if (earlier !== undefined && (await liveDemo(earlier)) !== undefined) {
    throw new DemoAlreadyRunningError(alreadyRunningMessage(dataDir, earlier));
  }
  const leftovers = (await processesMentioning(dataDir)).filter((p) => DEMO_SERVERS.test(p.command));
  await Promise.all(leftovers.map(stopLeftover));
  const record: OwnerRecord = { pid: process.pid };
  await writeOwner(file, record);
  let released = false;
  return {
    stoppedLeftovers: leftovers,
    recordWebUrl: async (webUrl) => {
      record.webUrl = webUrl;
      await writeOwner(file, record);
    },
    release: async () => {
      if (released) return;
      released = true;
      if ((await readOwner(file))?.pid === process.pid) await rm(file, { force: true });
    },
  };
}

export function describeStoppedLeftovers(leftovers: ProcessInfo[]): string | undefined {
  if (leftovers.length === 0) return undefined;
  const names = leftovers.map((p) => `${DEMO_SERVERS.exec(p.command)?.[1] ?? 'server'} (pid ${p.pid})`);
  return `An earlier demo on this folder ended without stopping its servers: stopped ${names.join(', ')}.`;
}
