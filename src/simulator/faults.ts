// Decides, per request, which fault (if any) the simulator inflicts. Pure bookkeeping: the HTTP side of a fault
// lives in fault-replies.ts.
import { z } from 'zod';
import type { SimClock } from './clock.js';
import { DRIFT_FLAG_VARIANTS, driftApplies } from './drift.js';
import type { Prng } from './prng.js';
import type { DriftVariant, FaultOutcome, FaultSettings, RawReply } from './types.js';
import { SimulatorControlError } from './types.js';

/** Endpoint keys that faults can hit (also the call-count keys). /login and /__sim/ are never faulted. */
export const FAULTABLE_ENDPOINTS = [
  'GET /events',
  'GET /users/me',
  'GET /calendars/{event_id}',
  'GET /calendars/{event_id}/slots',
  'POST /oauth2/token',
] as const;

export type EarlyFault =
  | { kind: 'status'; status: number }
  | { kind: 'hang' }
  | { kind: 'rate_limited'; retryAfter: string }
  | RawReply;

/** Generated bodies are capped so a typo in a test cannot make the simulator build gigabytes. */
const MAX_GENERATED_BYTES = 256 * 1024 * 1024;
const MAX_GENERATED_DEPTH = 10_000_000;

export interface FaultDecision {
  /** Answer with this instead of running the endpoint at all. */
  early: EarlyFault | null;
  /** Run the endpoint (side effects included), then cut its JSON body short. */
  malformed: boolean;
  drift: DriftVariant[];
  delayMs: number;
}

export function defaultFaultSettings(): FaultSettings {
  return {
    latencyMs: 0,
    jitterMs: 0,
    errorRate: 0,
    hangRate: 0,
    malformedJsonRate: 0,
    rateLimit: { requestsPerSecond: 0, retryAfter: 'seconds' },
    drift: {
      monthsAsStrings: false,
      firstAvailableNull: false,
      firstAvailableAsDateTime: false,
      datesInUtc: false,
      datesWithoutOffset: false,
      zoneNotAsked: false,
      invalidShapes: false,
    },
    queue: [],
  };
}

const endpointKey = z.enum(FAULTABLE_ENDPOINTS);
const rate = z.number().min(0).max(1);
const outcomeSchema = z.discriminatedUnion('kind', [
  z.strictObject({ endpoint: endpointKey.optional(), kind: z.literal('status'), status: z.number().int() }),
  z.strictObject({ endpoint: endpointKey.optional(), kind: z.literal('hang') }),
  z.strictObject({ endpoint: endpointKey.optional(), kind: z.literal('malformed') }),
  z.strictObject({
    endpoint: endpointKey.optional(),
    kind: z.literal('rate_limited'),
    retryAfter: z.string(),
  }),
  z.strictObject({
    endpoint: endpointKey.optional(),
    kind: z.literal('raw'),
    status: z.number().int().min(100).max(599),
    contentType: z.string(),
    body: z.string().optional(),
    generate: z
      .discriminatedUnion('shape', [
        z.strictObject({
          shape: z.literal('large'),
          bytes: z.number().int().min(16).max(MAX_GENERATED_BYTES),
          declareLength: z.boolean(),
        }),
        z.strictObject({ shape: z.literal('deep'), depth: z.number().int().min(1).max(MAX_GENERATED_DEPTH) }),
      ])
      .optional(),
  }),
  z.strictObject({
    endpoint: endpointKey.optional(),
    kind: z.literal('drift'),
    variant: z.enum(Object.values(DRIFT_FLAG_VARIANTS)),
  }),
]);
const patchSchema = z.strictObject({
  latencyMs: z.number().int().min(0).optional(),
  jitterMs: z.number().int().min(0).optional(),
  errorRate: rate.optional(),
  hangRate: rate.optional(),
  malformedJsonRate: rate.optional(),
  rateLimit: z
    .strictObject({
      requestsPerSecond: z.number().min(0).optional(),
      retryAfter: z.enum(['seconds', 'http-date']).optional(),
    })
    .optional(),
  drift: z
    .strictObject({
      monthsAsStrings: z.boolean().optional(),
      firstAvailableNull: z.boolean().optional(),
      firstAvailableAsDateTime: z.boolean().optional(),
      datesInUtc: z.boolean().optional(),
      datesWithoutOffset: z.boolean().optional(),
      zoneNotAsked: z.boolean().optional(),
      invalidShapes: z.boolean().optional(),
    })
    .optional(),
  only: z.array(endpointKey).nullable().optional(),
  queue: z.array(outcomeSchema).optional(),
});

export function mergeFaultSettings(current: FaultSettings, patch: unknown): FaultSettings {
  const parsed = patchSchema.safeParse(patch);
  if (!parsed.success)
    throw new SimulatorControlError(400, `invalid fault settings: ${parsed.error.message}`);
  const { only, queue, rateLimit, drift, ...scalars } = parsed.data;
  const next: FaultSettings = {
    ...current,
    ...scalars,
    rateLimit: { ...current.rateLimit, ...rateLimit },
    drift: { ...current.drift, ...drift },
    queue: queue ? queue.map((o) => ({ ...o })) : current.queue,
  };
  // `only: null` lifts the restriction (JSON cannot carry undefined).
  if (only === null) delete next.only;
  else if (only !== undefined) next.only = [...only];
  return next;
}

export interface FaultEngine {
  settings(): FaultSettings;
  update(patch: unknown): FaultSettings;
  decide(endpoint: string, clientId: string | null): FaultDecision;
}

const outcomeMatches = (o: FaultOutcome, endpoint: string) =>
  (o.endpoint === undefined || o.endpoint === endpoint) &&
  (o.kind !== 'drift' || driftApplies(o.variant, endpoint));

export function createFaultEngine(initial: FaultSettings, prng: Prng, clock: SimClock): FaultEngine {
  let current = initial;
  let errorsServed = 0;
  // Sliding one-second window per client on the SIM clock, so tests move it with advanceClock, not sleeps.
  const recentRequests = new Map<string, number[]>();

  const rateLimited = (clientId: string | null): EarlyFault | null => {
    const limit = current.rateLimit.requestsPerSecond;
    if (limit <= 0 || clientId === null) return null;
    const now = clock.nowMs();
    const window = (recentRequests.get(clientId) ?? []).filter((t) => t > now - 1000);
    recentRequests.set(clientId, window);
    if (window.length < limit) {
      window.push(now);
      return null;
    }
    const waitSeconds = Math.max(1, Math.ceil(((window[0] ?? now) + 1000 - now) / 1000));
    const retryAfter =
      current.rateLimit.retryAfter === 'seconds'
        ? String(waitSeconds)
        : new Date(now + waitSeconds * 1000).toUTCString();
    return { kind: 'rate_limited', retryAfter };
  };

  const inScope = (endpoint: string) => !current.only || current.only.includes(endpoint);

  const randomDecision = (endpoint: string, delayMs: number): FaultDecision => {
    const s = current;
    const decision: FaultDecision = { early: null, malformed: false, drift: [], delayMs };
    if (!inScope(endpoint)) return decision;
    if (prng.chance(s.hangRate)) decision.early = { kind: 'hang' };
    else if (prng.chance(s.errorRate))
      decision.early = { kind: 'status', status: errorsServed++ % 2 ? 503 : 500 };
    else if (prng.chance(s.malformedJsonRate)) decision.malformed = true;
    for (const [flag, variant] of Object.entries(DRIFT_FLAG_VARIANTS)) {
      if (s.drift[flag as keyof typeof DRIFT_FLAG_VARIANTS]) decision.drift.push(variant);
    }
    return decision;
  };

  return {
    settings: () => structuredClone(current),
    update(patch) {
      current = mergeFaultSettings(current, patch);
      // A new rate-limit policy starts with empty windows, so earlier traffic does not leak into it.
      if (typeof patch === 'object' && patch !== null && 'rateLimit' in patch) recentRequests.clear();
      return structuredClone(current);
    },
    decide(endpoint, clientId) {
      const s = current;
      const delayMs = !inScope(endpoint)
        ? 0
        : s.latencyMs + (s.jitterMs > 0 ? Math.floor(prng.next() * s.jitterMs) : 0);
      const index = s.queue.findIndex((o) => outcomeMatches(o, endpoint));
      if (index >= 0) {
        const [forced] = s.queue.splice(index, 1);
        const decision: FaultDecision = { early: null, malformed: false, drift: [], delayMs };
        if (!forced) return decision;
        if (forced.kind === 'malformed') decision.malformed = true;
        else if (forced.kind === 'drift') decision.drift.push(forced.variant);
        else decision.early = forced;
        return decision;
      }
      const limited = rateLimited(clientId);
      if (limited) return { early: limited, malformed: false, drift: [], delayMs };
      return randomDecision(endpoint, delayMs);
    },
  };
}
