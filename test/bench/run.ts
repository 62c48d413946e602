// `npm run bench`: runs the benchmarks, prints a table and writes bench-results.json. Never part of `npm test`.
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { benchSyncRound } from './sync-round.js';

const connections = Number(process.env.BENCH_CONNECTIONS ?? 100);
const machine = {
  cpus: os.cpus().length,
  node: process.version,
  memoryGiB: Math.round(os.totalmem() / 2 ** 30),
};
console.log(`slotfeed bench — ${machine.cpus} CPUs, Node ${machine.node}`);

const syncRound = await benchSyncRound(connections);
console.table(
  Object.entries(syncRound).map(([measure, value]) => ({ benchmark: 'sync round', measure, value })),
);
writeFileSync(
  'bench-results.json',
  `${JSON.stringify({ measuredAt: new Date().toISOString(), machine, syncRound }, null, 2)}\n`,
);
console.log('wrote bench-results.json');
process.exit(0);
