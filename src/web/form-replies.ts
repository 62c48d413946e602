// What every page's form handling shares: reading one text field of a parsed form or query, and answering a
// POST with 303 See Other (POST/redirect/GET), never cached, so a reload does not post again.
import type { FastifyReply } from 'fastify';

/** A form's or query's field, trimmed; '' when absent or not text (a repeated field arrives as an array). */
export function field(form: unknown, name: string): string {
  const value = (form as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim() : '';
}

export function seeOther(reply: FastifyReply, location: string): FastifyReply {
  return reply.header('cache-control', 'no-store').redirect(location, 303);
}

/** Every value of a field a form may repeat (checkboxes): one value arrives as a string, several as an array. */
export function fieldValues(form: unknown, name: string): string[] {
  const value = (form as Record<string, unknown> | undefined)?.[name];
  const values = Array.isArray(value) ? value : [value];
  return values
    .filter((v): v is string => typeof v === 'string')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}
