// What every page's form handling shares: reading one text field of a parsed form or query, and answering a
// POST with 303 See Other (POST/redirect/GET), never cached, so a reload does not post again.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

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

/**
 * Registers form actions (POST routes) whose thrown store errors are turned into client errors by `translate`
 * (an id from a stale page is a 404, a bad form value a 400), so each action is written without a try.
 */
/** What an action's path may name: the thing acted on, and a member of it. */
export type ActionRoute = { Params: { id: string; connectionId?: string } };

export function formActions(app: FastifyInstance, translate: (thrown: unknown) => unknown) {
  return (
    path: string,
    run: (request: FastifyRequest<ActionRoute>, reply: FastifyReply) => Promise<FastifyReply>,
  ): void => {
    app.post<ActionRoute>(path, async (request, reply) => {
      try {
        return await run(request, reply);
      } catch (thrown: unknown) {
        throw translate(thrown);
      }
    });
  };
}
