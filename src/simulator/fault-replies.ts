// The HTTP side of faults: delays, injected statuses, hangs, truncated bodies and drifted payloads.
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply } from 'fastify';
import type { SimContext } from './context.js';
import { driftPayload } from './drift.js';
import type { EarlyFault, FaultDecision } from './faults.js';
import type { RawBodyGenerator, RawReply } from './types.js';

const TOKEN_ENDPOINT = 'POST /oauth2/token';

/** Waits out injected latency; false when the simulator closed meanwhile (the caller must not answer). */
export async function waitInjectedLatency(ctx: SimContext, delayMs: number): Promise<boolean> {
  if (delayMs <= 0) return !ctx.shutdown.aborted;
  try {
    await sleep(delayMs, undefined, { signal: ctx.shutdown });
    return true;
  } catch {
    return false;
  }
}

/** Leaves the request unanswered: only the client giving up or close() (which destroys sockets) ends it. */
export function hangRequest(reply: FastifyReply): FastifyReply {
  reply.hijack();
  return reply;
}

function injectedStatusBody(
  status: number,
  endpoint: string,
): { headers: Record<string, string>; body: unknown } {
  const isToken = endpoint === TOKEN_ENDPOINT;
  const noStore: Record<string, string> = isToken ? { 'cache-control': 'no-store' } : {};
  if (status === 401 && isToken) {
    return { headers: noStore, body: { error: 'invalid_client', error_description: 'Simulated failure' } };
  }
  if (status === 401) {
    return {
      headers: { 'www-authenticate': 'Bearer realm="calendbook-api", error="invalid_token"' },
      body: { error: 'invalid_token', error_description: 'Simulated failure' },
    };
  }
  if (status === 400) {
    return isToken
      ? { headers: noStore, body: { error: 'invalid_request', error_description: 'Simulated failure' } }
      : { headers: {}, body: { error: 'bad_request', message: 'Simulated failure' } };
  }
  if (status === 429)
    return { headers: noStore, body: { error: 'rate_limited', message: 'Too many requests' } };
  return {
    headers: noStore,
    body: { error: status >= 500 ? 'internal_error' : 'error', message: 'Simulated failure' },
  };
}

const PAD_CHUNK = 64 * 1024;

/**
 * A generated body as a stream of small chunks: a 50 MB answer never sits in memory as one string, and a
 * client that stops reading (as it should, past its cap) stops the generation too.
 */
function generatedBody(generator: RawBodyGenerator): Readable {
  if (generator.shape === 'deep') {
    const { depth } = generator;
    return Readable.from(
      (function* () {
        for (let done = 0; done < depth; done += PAD_CHUNK)
          yield '['.repeat(Math.min(PAD_CHUNK, depth - done));
        for (let done = 0; done < depth; done += PAD_CHUNK)
          yield ']'.repeat(Math.min(PAD_CHUNK, depth - done));
      })(),
      { objectMode: false },
    );
  }
  const head = '{"pad":"';
  const tail = '"}';
  const padding = Math.max(0, generator.bytes - head.length - tail.length);
  return Readable.from(
    (function* () {
      yield head;
      const chunk = 'x'.repeat(PAD_CHUNK);
      for (let sent = 0; sent < padding; sent += PAD_CHUNK) {
        yield padding - sent >= PAD_CHUNK ? chunk : chunk.slice(0, padding - sent);
      }
      yield tail;
    })(),
    { objectMode: false },
  );
}

function replyRaw(reply: FastifyReply, raw: RawReply): FastifyReply {
  reply.code(raw.status).type(raw.contentType);
  if (!raw.generate) return reply.send(raw.body ?? '');
  if (raw.generate.shape === 'large' && raw.generate.declareLength) {
    reply.header('content-length', String(Math.max(raw.generate.bytes, 10)));
  }
  return reply.send(generatedBody(raw.generate));
}

export function replyWithEarlyFault(reply: FastifyReply, fault: EarlyFault, endpoint: string): FastifyReply {
  if (fault.kind === 'hang') return hangRequest(reply);
  if (fault.kind === 'raw') return replyRaw(reply, fault);
  if (fault.kind === 'rate_limited') {
    return reply
      .code(429)
      .header('retry-after', fault.retryAfter)
      .send({ error: 'rate_limited', message: 'Too many requests' });
  }
  // A 503 as a load balancer would send it: HTML, not JSON, so clients must not assume error bodies parse.
  if (fault.status === 503) {
    return reply
      .code(503)
      .type('text/html; charset=utf-8')
      .send('<html><body><h1>503 Service Temporarily Unavailable</h1></body></html>');
  }
  const { headers, body } = injectedStatusBody(fault.status, endpoint);
  return reply.code(fault.status).headers(headers).send(body);
}

/** Sends a successful JSON payload, drifted and/or truncated as the decision says. */
export function sendPayload(
  ctx: SimContext,
  reply: FastifyReply,
  payload: unknown,
  decision: FaultDecision,
  endpoint: string,
): FastifyReply {
  const body =
    decision.drift.length > 0 ? driftPayload(payload, decision.drift, endpoint, ctx.driftPrng) : payload;
  if (!decision.malformed) return reply.send(body);
  const text = JSON.stringify(body);
  return reply
    .type('application/json; charset=utf-8')
    .send(text.slice(0, Math.max(1, Math.floor(text.length / 2))));
}
