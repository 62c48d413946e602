// Reads one section from the environment: every variable of its tree, then its checks, then (when all parsed)
// its assembled value. Problems are collected, not thrown, so one start-up names every wrong variable.
import {
  isVariable,
  type Env,
  type PartialValuesOf,
  type SectionDeclaration,
  type ValuesOf,
  type VariableSpec,
  type VariableTree,
} from './variable.js';

/** A variable's value, or undefined after adding to `problems` why there is none. */
function readVariable(spec: VariableSpec, env: Env, problems: string[]): unknown {
  const given = env[spec.name];
  const raw = given === undefined || given === '' ? spec.default : given;
  if (raw === undefined) {
    problems.push(`${spec.name} is required: ${spec.description}`);
    return undefined;
  }
  const parsed = spec.schema.safeParse(raw);
  if (!parsed.success) {
    const shown = spec.secret ? '' : ` (got ${JSON.stringify(raw)})`;
    problems.push(`${spec.name} ${parsed.error.issues[0]?.message ?? 'is invalid'}${shown}`);
    return undefined;
  }
  return parsed.data;
}

function readTree<V extends VariableTree>(tree: V, env: Env, problems: string[]): PartialValuesOf<V> {
  return Object.fromEntries(
    Object.entries(tree).map(([key, node]) => [
      key,
      isVariable(node) ? readVariable(node, env, problems) : readTree(node, env, problems),
    ]),
  ) as PartialValuesOf<V>;
}

export function readSection<V extends VariableTree, C>(
  declaration: SectionDeclaration<V, C>,
  env: Env,
): { value: C; problems: [] } | { value?: undefined; problems: string[] } {
  const problems: string[] = [];
  const values = readTree(declaration.variables, env, problems);
  problems.push(...(declaration.check?.(values, env) ?? []));
  if (problems.length > 0) return { problems };
  return { value: declaration.assemble(values as ValuesOf<V>), problems: [] };
}

/** Every variable of a tree, in declaration order. */
export function variablesOf(tree: VariableTree): VariableSpec[] {
  return Object.values(tree).flatMap((node) => (isVariable(node) ? [node] : variablesOf(node)));
}
