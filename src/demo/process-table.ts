// Reading the machine's processes and listening sockets from Linux's /proc, for the demo to know who holds its
// data directory or a port it wants. Elsewhere (no /proc) every lookup finds nothing, and the demo says less.
import { readdir, readFile, readlink } from 'node:fs/promises';

export interface ProcessInfo {
  pid: number;
  /** The command line, its arguments joined by spaces. */
  command: string;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (thrown: unknown) {
    return (thrown as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function pids(): Promise<number[]> {
  const entries = await readdir('/proc').catch(() => [] as string[]);
  return entries.filter((entry) => /^\d+$/.test(entry)).map(Number);
}

export async function processInfo(pid: number): Promise<ProcessInfo | undefined> {
  const raw = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  if (raw === '') return undefined;
  return { pid, command: raw.split('\0').filter(Boolean).join(' ') };
}

/** The processes, other than this one, whose command line mentions `needle`. */
export async function processesMentioning(needle: string): Promise<ProcessInfo[]> {
  const found: ProcessInfo[] = [];
  for (const pid of await pids()) {
    if (pid === process.pid) continue;
    const info = await processInfo(pid);
    if (info?.command.includes(needle)) found.push(info);
  }
  return found;
}

/** The working directory of `pid`, when this process may read it. */
export async function workingDirectoryOf(pid: number): Promise<string | undefined> {
  return readlink(`/proc/${pid}/cwd`).catch(() => undefined);
}

/** Socket inodes listening on `port` (any address), from /proc/net/tcp and tcp6. */
async function listeningInodes(port: number): Promise<Set<string>> {
  const inodes = new Set<string>();
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = (await readFile(table, 'utf8').catch(() => '')).split('\n').slice(1);
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      // local_address is HEXIP:HEXPORT; state 0A is LISTEN; the inode is the tenth field.
      if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '0A' && fields[9]) inodes.add(fields[9]);
    }
  }
  return inodes;
}

/** The process listening on `port`, when it can be known (root sees every process's sockets). */
export async function listenerOn(port: number): Promise<ProcessInfo | undefined> {
  const inodes = await listeningInodes(port);
  if (inodes.size === 0) return undefined;
  for (const pid of await pids()) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode !== undefined && inodes.has(inode)) return processInfo(pid);
    }
  }
  return undefined;
}

/** `slotfeed demo` as npm's script, the built CLI or the sources run it (`… cli.js demo`, `… cli.ts demo …`). */
export function isDemoCommand(command: string): boolean {
  return /\bcli\.[jt]s demo\b/.test(command);
}

/** Who listens on `port`, in a few words for a person: another slotfeed demo and its folder, or a command. */
export async function describeListener(port: number): Promise<string | undefined> {
  const listener = await listenerOn(port);
  if (listener === undefined) return undefined;
  if (isDemoCommand(listener.command)) {
    const cwd = await workingDirectoryOf(listener.pid);
    return `another slotfeed demo (pid ${listener.pid}${cwd === undefined ? '' : `, run from ${cwd}`})`;
  }
  return `pid ${listener.pid} (${listener.command.slice(0, 80)})`;
}
