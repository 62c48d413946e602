// What a benchmark reads about processes and the machine from /proc (Linux): CPU time and resident memory of
// a process by pid (worker children included), and how busy the whole machine was over an interval.
import { readFileSync } from 'node:fs';

// USER_HZ: /proc reports CPU times in clock ticks, 100 per second on every mainstream Linux build.
const TICKS_PER_SECOND = 100;

/** User + system CPU time of a process so far, in ms. */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may hold spaces and parentheses: count fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / TICKS_PER_SECOND;
}

/**
 * RSS now, its peak (VmHWM), and its private part (RssAnon: what the process itself allocated, without shared
 * file pages such as the ~56 MiB node binary, which every Node process on the machine shares), in MiB.
 */
export function memoryMibOf(pid: number): { rss: number; peak: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024, anon: kib('RssAnon') / 1024 };
}

export interface MachineCpuSample {
  busy: number;
  total: number;
}

export function sampleMachineCpu(): MachineCpuSample {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((sum, n) => sum + n, 0);
  // idle + iowait are the time no process wanted the CPU.
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busy: total - idle, total };
}

/** Share of all cores' time that was busy between two samples (0–1). */
export function busyShare(from: MachineCpuSample, to: MachineCpuSample): number {
  const total = to.total - from.total;
  return total > 0 ? (to.busy - from.busy) / total : 0;
}

export function loadAverage(): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}

export const round = (value: number, digits = 2) => {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
};
