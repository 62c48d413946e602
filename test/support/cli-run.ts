// Runs the slotfeed CLI in this process with `env`, as a pipe would (not a terminal), and collects what it
// printed: the way the command tests call a command and read its answer.
import { runCli } from '../../src/cli/program.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runCapturedCli(
  env: Record<string, string | undefined>,
  args: string[],
): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, env, {
    stdout: { write: (t) => void (stdout += t), isTTY: false },
    stderr: { write: (t) => void (stderr += t) },
  });
  return { code, stdout, stderr };
}
