// The memory settings the runtime image gives slotfeed (its Dockerfile's ENV): benchmarks run workers with them.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { check } from './bench-result.js';

export function runtimeImageMemorySettings(): { MALLOC_ARENA_MAX: string; NODE_OPTIONS: string } {
  const dockerfile = readFileSync(fileURLToPath(new URL('../../Dockerfile', import.meta.url)), 'utf8');
  const arenas = /^ENV .*\bMALLOC_ARENA_MAX=(\S+)/m.exec(dockerfile)?.[1];
  const nodeOptions = /^ENV .*\bNODE_OPTIONS=(\S+)/m.exec(dockerfile)?.[1];
  check(
    arenas !== undefined && nodeOptions !== undefined,
    'the Dockerfile sets no MALLOC_ARENA_MAX / NODE_OPTIONS',
  );
  return { MALLOC_ARENA_MAX: arenas, NODE_OPTIONS: nodeOptions };
}
