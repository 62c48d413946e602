// How a setting is declared, once: an environment variable (name, description, default, parser) placed in its
// section's layout, the shape code reads. A section may add what it derives from its values and the checks no
// single variable can make. Config's type is inferred from these declarations (config.ts): each value's type
// is its parser's output, so a setting is never written a second time as a type or a builder.
import type { z } from 'zod';

export type Env = Record<string, string | undefined>;

export interface VariableSpec<N extends string = string, S extends z.ZodType = z.ZodType> {
  /** The environment variable. */
  name: N;
  description: string;
  /** Shown in docs and used when the variable is unset; absent means required. */
  default?: string;
  /** Secrets are never echoed back in error messages. */
  secret?: boolean;
  schema: S;
}

export function variable<const N extends string, S extends z.ZodType>(
  spec: VariableSpec<N, S>,
): VariableSpec<N, S> {
  return spec;
}

/** A section's variables, laid out (and nested) as code reads their values. */
export type VariableTree = { readonly [key: string]: VariableSpec | VariableTree };

/** The values of a tree, in its layout: each variable's parsed value. */
export type ValuesOf<V> = {
  [K in keyof V]: V[K] extends VariableSpec ? z.output<V[K]['schema']> : ValuesOf<V[K]>;
};

/** The same, with each value that did not parse left undefined. */
export type PartialValuesOf<V> = {
  [K in keyof V]: V[K] extends VariableSpec ? z.output<V[K]['schema']> | undefined : PartialValuesOf<V[K]>;
};

export interface SectionDeclaration<V extends VariableTree = VariableTree, C = unknown> {
  variables: V;
  /**
   * Problems no single variable shows (two that disagree, a retired variable still set). Runs on whatever
   * parsed, so every problem is reported at once.
   */
  check?(values: PartialValuesOf<V>, env: Env): string[];
  /** The section as code reads it, from its values once every one parsed. */
  assemble(values: ValuesOf<V>): C;
}

/** Declares a section; without `assemble`, code reads its values as they are laid out. */
export function section<V extends VariableTree, C = ValuesOf<V>>(declaration: {
  variables: V;
  check?: (values: PartialValuesOf<V>, env: Env) => string[];
  assemble?: (values: ValuesOf<V>) => C;
}): SectionDeclaration<V, C> {
  return {
    ...declaration,
    assemble: declaration.assemble ?? ((values) => values as unknown as C),
  };
}

export function isVariable(node: VariableSpec | VariableTree): node is VariableSpec {
  return typeof node.name === 'string' && 'schema' in node;
}
