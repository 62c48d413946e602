// The scheduling service's API and OAuth clients, each call counted in the metrics.
import type { Config } from '../config.js';
import { upstreamStatusLabel, type Metrics } from '../lib/metrics.js';
import { createApiClient, createOAuthClient } from '../upstream/index.js';
import type { Clock } from './clock.js';

export interface UpstreamTransport {
  /** Aborts the clients' calls. */
  signal?: AbortSignal;
  /** What sends their requests; absent: the global fetch. */
  fetch?: typeof fetch;
}

/** The upstream API and OAuth clients, reporting every call to `onCall`. */
export function createUpstreamClients(
  upstream: Config['upstream'],
  clock: Clock,
  onCall: (endpoint: string, outcome: { status?: number }) => void,
  { signal, fetch }: UpstreamTransport = {},
) {
  const api = createApiClient({
    baseUrl: upstream.baseUrl,
    timeoutMs: upstream.timeoutMs,
    slotsQuery: upstream.slotsQuery,
    now: clock.now,
    ...(signal ? { signal } : {}),
    ...(fetch ? { fetch } : {}),
    onCall,
  });
  const oauth = createOAuthClient({
    authUrl: upstream.authUrl,
    clientId: upstream.clientId,
    clientSecret: upstream.clientSecret,
    redirectUri: upstream.redirectUri,
    ...(upstream.scope ? { scope: upstream.scope } : {}),
    timeoutMs: upstream.timeoutMs,
    now: clock.now,
    ...(signal ? { signal } : {}),
    ...(fetch ? { fetch } : {}),
    onCall,
  });
  return { api, oauth };
}

export function countUpstreamCall(metrics: Metrics) {
  return (endpoint: string, outcome: { status?: number }) =>
    metrics.upstreamCalls.inc({ endpoint, status: upstreamStatusLabel(outcome.status) });
}
