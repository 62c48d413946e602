// Looking at processes a test started, or that a demo it started started: alive, found by command line, and
// in which process group (Linux /proc; the lookups find nothing elsewhere).
import { readdir, readFile } from 'node:fs/promises';

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids of processes whose command line mentions `needle`. */
export async function processesMentioning(needle: string): Promise<number[]> {
  const entries = await readdir('/proc').catch(() => [] as string[]);
  const found: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(needle)) found.push(Number(entry));
  }
  return found;
}

/** The process group of `pid`: the field after the state, which follows the command's name. */
export async function processGroupOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}
