import type { z } from 'zod';
import { UpstreamInvalidPayloadError } from './errors.js';

const PLAIN_KEY = /^[A-Za-z_$][\w$]*$/;

/** 'availability.disabled_dates.months[0]', '[3].title', 'slot_list["2026-13-01T09:00:00Z"]'. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && PLAIN_KEY.test(key)) out += out === '' ? key : `.${key}`;
    // Keys come from the payload (slot_list keys): quoted, and cut short so a message stays a message.
    else out += `[${JSON.stringify(String(key).slice(0, 64))}]`;
  }
  return out === '' ? '(root)' : out;
}

/**
 * The payload as the schema's output, or an invalid_payload error naming the first violation. Issue
 * messages are zod's and ours; neither repeats the offending value, so a malformed token response cannot
 * leak its token through here.
 */
export function parsePayload<S extends z.ZodType>(
  schema: S,
  data: unknown,
  source: { endpoint: string; status: number },
): z.output<S> {
  const result = schema.safeParse(data);
  if (result.success) return result.data;
  const first = result.error.issues[0];
  throw new UpstreamInvalidPayloadError({
    ...source,
    path: first ? formatIssuePath(first.path) : '(root)',
    issue: first?.message ?? 'does not match the expected shape',
    retryable: false,
  });
}
