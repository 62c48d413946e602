// One environment variable's declaration: its section, description, default and parser.
import type { z } from 'zod';

export type Section = 'database' | 'redis' | 'log' | 'upstream' | 'vault' | 'sync' | 'web' | 'webhooks';

export interface VariableSpec<T> {
  section: Section;
  description: string;
  /** Shown in docs and used when the variable is unset; absent means required. */
  default?: string;
  /** Secrets are never echoed back in error messages. */
  secret?: boolean;
  schema: z.ZodType<T>;
}

export function variable<T>(spec: VariableSpec<T>): VariableSpec<T> {
  return spec;
}
