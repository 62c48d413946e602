// Runs the slotfeed CLI in this process with `env`, as a pipe would (not a terminal), and collects what it
// printed: the way the command tests call a command and read its answer. `stdin`: what a pipe into the command
// holds (for --password-stdin); `stdinIsTTY`: stdin is a terminal instead.
import { runCli } from '../../src/cli/program.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCapturedCli(
  env: Record<string, string | undefined>,
  args: string[],
  input: { stdin?: string; stdinIsTTY?: boolean } = {},
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, env, {
    stdout: { write: (t) => void (stdout += t), isTTY: false },
    stderr: { write: (t) => void (stderr += t) },
    stdin: { isTTY: input.stdinIsTTY ?? false, readAll: async () => input.stdin ?? '' },
  });
  return { code, stdout, stderr };
}
