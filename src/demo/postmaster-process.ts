// The embedded Postgres's server process (the postmaster), started in a process group of its own. A terminal's
// Ctrl-C sends SIGINT to its whole foreground process group: a server in the demo's group began its fast
// shutdown at that very moment, while the demo was still closing the roles that use it, and they logged
// errors. Apart, it stops only when asked (stop()), after everything that uses it has closed.
import { spawn } from 'node:child_process';

export interface PostmasterInput {
  /** The `postgres` executable. */
  executable: string;
  dataDir: string;
  port: number;
  /** Further command-line arguments (`-c name=value` settings). */
  flags: readonly string[];
  /** Started by root, the server runs as this user (Postgres refuses to run as root). */
  runAs?: { uid: number; gid: number };
  /** Each line the server logs, before and after it is ready. */
  onLog: (line: string) => void;
}

export interface Postmaster {
  pid: number;
  /** Asks for a fast shutdown (SIGINT) without waiting: all an exit handler can do. Harmless once it exited. */
  requestStop(): void;
  /** Fast shutdown; resolves once the server has exited. */
  stop(): Promise<void>;
}

export type PostmasterStart = { kind: 'ready'; postmaster: Postmaster } | { kind: 'failed'; lines: string[] };

const READY = 'database system is ready to accept connections';

/** Starts the server and resolves once it accepts connections, or once it has given up (with its last words). */
export function startPostmaster(input: PostmasterInput): Promise<PostmasterStart> {
  const child = spawn(input.executable, ['-D', input.dataDir, '-p', String(input.port), ...input.flags], {
    // A session, and so a process group, of its own: see above.
    detached: true,
    // Its log goes to stderr; read for as long as it runs, or a full pipe would block its writes.
    stdio: ['ignore', 'ignore', 'pipe'],
    ...input.runAs,
    // The "ready" line is looked for in English; the cluster's lc_messages (set by initdb) takes over from here.
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve) => {
    const lines: string[] = [];
    let ready = false;
    let partial = '';
    child.stderr.on('data', (chunk: Buffer) => {
      const text = partial + chunk.toString('utf8');
      const complete = text.split('\n');
      partial = complete.pop() ?? '';
      for (const line of complete) {
        if (line.trim() === '') continue;
        input.onLog(line);
        if (ready) continue;
        lines.push(line);
        if (line.includes(READY) && child.pid !== undefined) {
          ready = true;
          resolve({ kind: 'ready', postmaster: postmasterOf(child.pid, exited) });
        }
      }
    });
    child.once('error', (error) => resolve({ kind: 'failed', lines: [...lines, error.message] }));
    child.once('exit', (code, signal) => {
      if (partial.trim() !== '') lines.push(partial);
      resolve({ kind: 'failed', lines: [...lines, `(exited with ${signal ?? `code ${code}`})`] });
    });
  });
}

function postmasterOf(pid: number, exited: Promise<void>): Postmaster {
  const requestStop = () => {
    try {
      process.kill(pid, 'SIGINT');
    } catch {
      // Already gone.
    }
  };
  return {
    pid,
    requestStop,
    stop: async () => {
      requestStop();
      await exited;
    },
  };
}
