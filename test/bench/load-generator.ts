// Runs autocannon in a second process (its CLI, JSON output), so the load generator never shares an event loop
// with the server it measures.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const AUTOCANNON = fileURLToPath(new URL('../../node_modules/autocannon/autocannon.js', import.meta.url));

export interface LoadOptions {
  url: string;
  connections: number;
  seconds: number;
  headers?: Record<string, string>;
}

export interface LoadResult {
  requestsPerSecond: number;
  p99Ms: number;
  p50Ms: number;
  /** Responses by status code, e.g. { '200': 41230 }. */
  statuses: Record<string, number>;
  errors: number;
  throughputMiBps: number;
}

interface AutocannonJson {
  requests: { average: number };
  latency: { p99: number; p50: number };
  throughput: { average: number };
  errors: number;
  timeouts: number;
  statusCodeStats?: Record<string, { count: number }>;
}

export function runLoad(options: LoadOptions): Promise<LoadResult> {
  const args = [AUTOCANNON, '-j', '-c', String(options.connections), '-d', String(options.seconds)];
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push('-H', `${name}=${value}`);
  args.push(options.url);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited ${code}: ${stderr.slice(0, 500)}`));
      try {
        const result = JSON.parse(stdout) as AutocannonJson;
        resolve({
          requestsPerSecond: result.requests.average,
          p99Ms: result.latency.p99,
          p50Ms: result.latency.p50,
          statuses: Object.fromEntries(
            Object.entries(result.statusCodeStats ?? {}).map(([status, s]) => [status, s.count]),
          ),
          errors: result.errors + result.timeouts,
          throughputMiBps: result.throughput.average / 2 ** 20,
        });
      } catch (e: unknown) {
        reject(new Error(`unreadable autocannon output: ${String(e)}: ${stdout.slice(0, 300)}`));
      }
    });
  });
}
