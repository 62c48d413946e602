// How the JSON API answers a read (docs/api-and-webhooks.md): the body checked against its schema (what is sent
// is what the document says), a strong ETag (a hash of the bytes) and Last-Modified, and 304 to a client that
// has these bytes already, as feeds do.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { formatHttpDate } from '../../lib/http-date.js';
import { isNotModified } from '../conditional-get.js';

/** Answers that may be kept as long as a feed's (half a sync interval): nothing changes faster than a sync. */
export const keptFor = (seconds: number) => `private, max-age=${seconds}`;
/** Answers a client revalidates every time: what a person may change at any moment (share links). */
export const REVALIDATED = 'private, no-cache';

/**
 * The answer, validated against its schema (what is sent is what the document says), with validators; 304 when
 * the client has these bytes already.
 */
export function sendData<T extends z.ZodType>(
  request: FastifyRequest,
  reply: FastifyReply,
  schema: T,
  body: z.input<T>,
  lastModified: Date,
  cacheControl: string,
): FastifyReply {
  const text = JSON.stringify(schema.parse(body));
  const tag = createHash('sha256').update(text).digest('base64url').slice(0, 32);
  reply
    .header('etag', `"${tag}"`)
    .header('last-modified', formatHttpDate(lastModified))
    .header('cache-control', cacheControl)
    .header('vary', 'Authorization');
  const notModified = isNotModified(
    { ifNoneMatch: request.headers['if-none-match'], ifModifiedSince: request.headers['if-modified-since'] },
    { opaqueTags: [tag], lastModified },
  );
  if (notModified) return reply.code(304).send();
  return reply.type('application/json; charset=utf-8').send(text);
}

export const latest = (...dates: (Date | null)[]) =>
  new Date(Math.max(...dates.map((d) => d?.getTime() ?? 0)));
