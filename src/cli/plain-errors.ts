// What a failed command says. The failures a first run meets (Postgres not reachable, a database not migrated,
// Redis not answering) are said plainly with what to do, instead of the driver's invocation dump; any other
// failure keeps its own message. All of them exit 1 (docs/operating.md, "Commands"): the command line and the
// configuration were valid, what they point at was not ready, and the same command may succeed once it is.
import { variables } from '../config.js';
import { coerceError } from '../lib/coerce-error.js';
import { redactText } from '../log.js';
import { databaseSetupProblem, databaseUnavailableReason } from '../store/database-errors.js';
import { isMigrationError } from '../store/migrations/index.js';
import { RedisUnreachableError } from './redis-check.js';

type Env = Record<string, string | undefined>;

/** Where DATABASE_URL points, without its credentials: host, port and database name. */
function databaseLocation(databaseUrl: string | undefined): { server: string; database: string } {
  try {
    const url = new URL(databaseUrl ?? '');
    return {
      server: `${url.hostname}:${url.port || '5432'}`,
      database: decodeURIComponent(url.pathname.slice(1)),
    };
  } catch {
    // Unreachable in practice: a command that opened the database had DATABASE_URL validated first.
    return { server: 'the server of DATABASE_URL', database: '(see DATABASE_URL)' };
  }
}

// A DATABASE_URL of the shell wins over a running demo's (cli/demo-env-discovery.ts): one left set from
// elsewhere hides the demo.
const DEMO_HINT =
  'To reach a running demo instead (`npm run demo`), run the CLI from the project directory with ' +
  'DATABASE_URL unset: it finds the demo by itself.';

function databaseMessage(thrown: unknown, env: Env): string | undefined {
  const { server, database } = databaseLocation(env.DATABASE_URL);
  switch (databaseSetupProblem(thrown)) {
    case 'not_migrated':
      return (
        `The database "${database}" at ${server} lacks slotfeed's tables (its migrations have not been ` +
        'applied, or not all of them). Run `slotfeed migrate` with the same DATABASE_URL, then try again.'
      );
    case 'no_such_database':
      return (
        `Postgres at ${server} has no database "${database}" (DATABASE_URL). Create it ` +
        `(\`createdb ${database}\`) or correct DATABASE_URL, then run \`slotfeed migrate\`.`
      );
    case 'access_denied':
      return `Postgres at ${server} refused the user or password of DATABASE_URL. Check DATABASE_URL.`;
    case undefined:
      break;
  }
  switch (databaseUnavailableReason(thrown)) {
    case 'unreachable':
      return (
        `Cannot reach Postgres at ${server} (DATABASE_URL). Check that DATABASE_URL is right and that the ` +
        `server is running. ${DEMO_HINT}`
      );
    case 'statement_timeout':
    case 'lock_timeout':
    case 'pool_timeout':
      return `Postgres at ${server} did not answer in time; it may be overloaded. Try again.`;
    case undefined:
      return undefined;
  }
}

/** The line(s) a failed command prints after "slotfeed: ", secrets masked. */
export function plainFailureMessage(thrown: unknown, env: Env): string {
  if (thrown instanceof RedisUnreachableError) return thrown.message;
  // A command that got past the check and then lost Redis: ioredis gives up after its retries.
  if (coerceError(thrown).name === 'MaxRetriesPerRequestError') {
    return new RedisUnreachableError(env.REDIS_URL || (variables.REDIS_URL.default ?? '')).message;
  }
  if (isMigrationError(thrown) && thrown.code === 'connection_failed') {
    return redactText(`${thrown.message}. Check that DATABASE_URL is right and that the server is running.`);
  }
  return databaseMessage(thrown, env) ?? redactText(coerceError(thrown).message);
}
