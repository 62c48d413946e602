// A CPU profile of one measured phase of a bench (issue 43), not of its setup: with BENCH_CPU_PROFILE=<dir> set,
// `profilePhase` runs V8's sampling profiler (node:inspector) around the phase and writes
// <dir>/<name>.cpuprofile, which Chrome's DevTools and `node --cpu-prof`'s readers open. Unset, it only runs the
// phase.
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';

export async function profilePhase<T>(name: string, phase: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_CPU_PROFILE;
  if (!dir) return phase();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await phase();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${name}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    console.log(`CPU profile of ${name}: ${file}`);
  }
}
