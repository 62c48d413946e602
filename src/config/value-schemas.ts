// Value parsers that several sections' variables share.
import { z } from 'zod';

export const httpUrl = z
  .string()
  .url()
  .refine((v) => /^https?:\/\//.test(v), 'must be an http:// or https:// URL')
  .transform((v) => v.replace(/\/+$/, ''));
export const positiveInt = (max: number) => z.coerce.number().int().min(1).max(max);
/** Milliseconds, 0 meaning no limit. */
export const timeoutMs = z.coerce.number().int().min(0).max(3_600_000);
