// Runs the real `slotfeed` CLI in a child process, for tests that kill or signal it: the TypeScript through
// tsx, or (for benchmarks, which measure what production runs) the build in dist/.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { patient } from './patience.js';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface SlotfeedProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function spawnSlotfeed(
  args: string[],
  env: Record<string, string>,
  options: { from?: 'source' | 'build' } = {},
): SlotfeedProcess {
  const entry = options.from === 'build' ? ['dist/cli.js'] : ['--import', 'tsx', 'src/cli.ts'];
  const child = spawn(process.execPath, [...entry, ...args], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => output, exited };
}

/** A `slotfeed <role>` child process, once it says it is running (its roles have started). */
export async function startRoleProcess(
  role: 'worker' | 'scheduler',
  env: Record<string, string>,
): Promise<SlotfeedProcess> {
  const started = spawnSlotfeed([role], env);
  const deadline = Date.now() + patient(30_000);
  while (!started.output().includes('slotfeed running')) {
    if (started.child.exitCode !== null || Date.now() > deadline) {
      started.child.kill('SIGKILL');
      throw new Error(`the ${role} did not start:\n${started.output().slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return started;
}

export const startWorkerProcess = (env: Record<string, string>) => startRoleProcess('worker', env);

/** SIGKILLs whichever of these processes still run, and waits until all have exited. */
export async function killProcesses(processes: readonly SlotfeedProcess[]): Promise<void> {
  for (const p of processes)
    if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await Promise.all(processes.map((p) => p.exited));
}
