// Environment → one validated, typed Config. Every variable is declared once, in its section's
// config/variables-<section>.ts (name, description, default, parser, and where code reads its value); Config's
// type is inferred from those declarations, and the table in docs/configuration.md is checked against them by
// a test. A command asks only for the sections it uses (`slotfeed migrate` needs no OAuth client), and a wrong or
// missing value stops start-up with a message that names the variable.
import { readSection, variablesOf } from './config/read-section.js';
import type { Env, VariableSpec, VariableTree } from './config/variable.js';
import { caldavSection } from './config/variables-caldav.js';
import { databaseSection } from './config/variables-database.js';
import { logSection } from './config/variables-log.js';
import { redisSection } from './config/variables-redis.js';
import { syncSection } from './config/variables-sync.js';
import { upstreamSection } from './config/variables-upstream.js';
import { vaultSection } from './config/variables-vault.js';
import { webSection } from './config/variables-web.js';
import { webhooksSection } from './config/variables-webhooks.js';

const sections = {
  database: databaseSection,
  redis: redisSection,
  log: logSection,
  upstream: upstreamSection,
  vault: vaultSection,
  sync: syncSection,
  web: webSection,
  webhooks: webhooksSection,
  caldav: caldavSection,
};

type Sections = typeof sections;
type Section = keyof Sections;

/** Each section as code reads it: its variables' parsed values in their layout, or what it assembles from them. */
export type Config = { [S in Section]: ReturnType<Sections[S]['assemble']> };

type Leaves<V> = { [K in keyof V]: V[K] extends VariableSpec ? V[K] : Leaves<V[K]> }[keyof V];
type DeclaredVariable = {
  [S in Section]: Leaves<Sections[S]['variables']> & { section: S };
}[Section];

/** Every variable by its name, with its section: for docs, `--help` and the defaults tools start from. */
export const variables = Object.fromEntries(
  (Object.entries(sections) as [Section, { variables: VariableTree }][]).flatMap(([section, declaration]) =>
    variablesOf(declaration.variables).map((spec) => [spec.name, { ...spec, section }]),
  ),
) as { [V in DeclaredVariable as V['name']]: V };

export type VariableName = keyof typeof variables;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Reads and validates the variables of the requested sections; throws ConfigError listing every problem. */
export function loadConfig<S extends Section>(env: Env, requested: readonly S[]): Pick<Config, S> {
  const problems: string[] = [];
  const config: Partial<Record<Section, unknown>> = {};
  for (const section of new Set(requested)) {
    const read = readSection<VariableTree, unknown>(sections[section], env);
    problems.push(...read.problems);
    config[section] = read.value;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config as Pick<Config, S>;
}

/** One row per variable, for the table in docs/configuration.md and `slotfeed --help`. */
export function describeVariables(): {
  name: VariableName;
  section: Section;
  default?: string;
  description: string;
}[] {
  return Object.values(variables).map((spec) => ({
    name: spec.name,
    section: spec.section,
    default: spec.default,
    description: spec.description,
  }));
}
