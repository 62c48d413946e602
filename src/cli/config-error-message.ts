// What a command stopped by its configuration prints (exit 2). The usual first meeting is a CLI run without
// DATABASE_URL in the project directory, often to look at the demo: that one says where a database comes from.
import { variables, type ConfigError } from '../config.js';

type Env = Record<string, string | undefined>;

const DATABASE_URL = variables.DATABASE_URL.name;

const NO_DATABASE_HINT =
  `${DATABASE_URL} is not set. A demo that is running (\`npm run demo\`) is found by itself when the CLI runs ` +
  `from the project directory; to use another database, set ${DATABASE_URL} (.env.example lists every variable).`;

export function configErrorMessage(error: ConfigError, env: Env): string {
  // Unset (or empty, which counts as unset) and complained about: not a wrong value, a missing database.
  const databaseMissing =
    !env[DATABASE_URL] && error.problems.some((problem) => problem.startsWith(`${DATABASE_URL} `));
  return [
    error.message,
    ...(databaseMissing ? [NO_DATABASE_HINT] : []),
    'See docs/configuration.md for every setting.',
  ]
    .map((text) => `${text}\n`)
    .join('');
}
