// Webhook endpoints and their deliveries. An endpoint belongs to a connection or to a team; its signing secret
// (Standard Webhooks: `whsec_` and base64 of 32 random bytes) is shown once, at creation, and kept sealed by the
// token vault, bound to the endpoint's id: only the delivery worker opens it.
import { randomBytes, randomUUID } from 'node:crypto';
import type { PrismaClient } from '../generated/prisma/client.js';
import { Prisma } from '../generated/prisma/client.js';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT, type WebhookEventType } from './webhook-events.js';
import { recordTestEvent } from './webhook-outbox.js';
import { validWebhookUrl, WebhookTargetError } from './webhook-targets.js';
import { ConnectionNotFoundError } from './connections.js';
import { TeamNotFoundError } from './teams.js';
import type { TokenVault } from './token-vault.js';

export interface WebhookEndpointRecord {
  id: string;
  connectionId: string | null;
  teamId: string | null;
  url: string;
  events: WebhookEventType[];
  createdAt: Date;
  failingSince: Date | null;
  disabledAt: Date | null;
  disabledReason: string | null;
}

export interface WebhookDeliveryRecord {
  id: string;
  endpointId: string;
  eventType: string;
  createdAt: Date;
  attempts: number;
  lastAttemptAt: Date | null;
  lastStatus: number | null;
  lastLatencyMs: number | null;
  lastError: string | null;
  deliveredAt: Date | null;
  givenUpAt: Date | null;
}

export class WebhookEndpointNotFoundError extends Error {
  constructor(readonly endpointId: string) {
    super(`no webhook endpoint with id ${endpointId}`);
    this.name = 'WebhookEndpointNotFoundError';
  }
}

export { WebhookTargetError };

export interface WebhookStore {
  /** The secret is returned only here. Throws WebhookTargetError for a URL that may not be used. */
  create(input: {
    owner: { connectionId: string } | { teamId: string };
    url: string;
    events?: readonly string[];
  }): Promise<{ endpoint: WebhookEndpointRecord; secret: string }>;
  list(filter?: { connectionId?: string; teamId?: string }): Promise<WebhookEndpointRecord[]>;
  get(endpointId: string): Promise<WebhookEndpointRecord>;
  delete(endpointId: string): Promise<void>;
  /** Enables a disabled endpoint again (deliveries given up stay given up). */
  enable(endpointId: string): Promise<void>;
  /**
   * Writes a webhook.test for the endpoint (disabled or not), delivered like any event by the delivery worker;
   * the delivery, queued. Throws WebhookEndpointNotFoundError.
   */
  sendTestEvent(endpointId: string, now: Date): Promise<WebhookDeliveryRecord>;
  /** The latest deliveries of an endpoint, newest first. */
  deliveries(endpointId: string, limit?: number): Promise<WebhookDeliveryRecord[]>;
  /** One delivery as the log shows it; undefined when it is gone (its endpoint deleted). */
  delivery(deliveryId: string): Promise<WebhookDeliveryRecord | undefined>;
  /** The endpoint's secret, for signing. */
  secretOf(endpointId: string): Promise<string>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const sealingContext = (endpointId: string) => `webhook:${endpointId}`;
const DELIVERY_LOG_OMITS = { payload: true, enqueuedAt: true } as const;
const ENDPOINT_FIELDS = {
  id: true,
  connectionId: true,
  teamId: true,
  url: true,
  events: true,
  createdAt: true,
  failingSince: true,
  disabledAt: true,
  disabledReason: true,
} as const;

function validEvents(events: readonly string[] | undefined): WebhookEventType[] {
  if (events === undefined || events.length === 0) return [...WEBHOOK_EVENT_TYPES];
  if (events.includes(WEBHOOK_TEST_EVENT)) {
    throw new WebhookTargetError(
      `"${WEBHOOK_TEST_EVENT}" is not subscribed to: every endpoint gets it when a test is asked for; ` +
        `the events are ${WEBHOOK_EVENT_TYPES.join(', ')}`,
    );
  }
  const unknown = events.find((e) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(e));
  if (unknown !== undefined) {
    throw new WebhookTargetError(`no event "${unknown}"; the events are ${WEBHOOK_EVENT_TYPES.join(', ')}`);
  }
  return [...new Set(events)] as WebhookEventType[];
}

/** `vault` is needed to make endpoints and to open their secrets; a command without TOKEN_ENCRYPTION_KEY lists. */
export function createWebhookStore(
  prisma: PrismaClient,
  vault: TokenVault | undefined,
  policy: { allowPrivateTargets: boolean },
): WebhookStore {
  const needVault = (): TokenVault => {
    if (vault === undefined)
      throw new Error('webhook secrets need TOKEN_ENCRYPTION_KEY (they are kept sealed)');
    return vault;
  };
  const toRecord = (row: Prisma.WebhookEndpointGetPayload<{ select: typeof ENDPOINT_FIELDS }>) => ({
    ...row,
    events: row.events as WebhookEventType[],
  });
  async function row(endpointId: string) {
    const found = UUID.test(endpointId)
      ? await prisma.webhookEndpoint.findUnique({ where: { id: endpointId } })
      : null;
    if (!found) throw new WebhookEndpointNotFoundError(endpointId);
    return found;
  }

  async function deliveryById(deliveryId: string): Promise<WebhookDeliveryRecord | undefined> {
    if (!UUID.test(deliveryId)) return undefined;
    const found = await prisma.webhookDelivery.findUnique({
      where: { id: deliveryId },
      omit: DELIVERY_LOG_OMITS,
    });
    return found ?? undefined;
  }

  return {
    async create(input) {
      const url = validWebhookUrl(input.url, { allowPrivate: policy.allowPrivateTargets });
      const events = validEvents(input.events);
      const id = randomUUID();
      const secret = `whsec_${randomBytes(32).toString('base64')}`;
      const { owner } = input;
      try {
        const created = await prisma.webhookEndpoint.create({
          data: { id, ...owner, url, events, secretSealed: needVault().seal(secret, sealingContext(id)) },
          select: ENDPOINT_FIELDS,
        });
        return { endpoint: toRecord(created), secret };
      } catch (error: unknown) {
        if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2003') {
          throw 'teamId' in owner
            ? new TeamNotFoundError(owner.teamId)
            : new ConnectionNotFoundError(owner.connectionId);
        }
        throw error;
      }
    },

    async list(filter = {}) {
      const rows = await prisma.webhookEndpoint.findMany({
        where: {
          ...(filter.connectionId !== undefined ? { connectionId: filter.connectionId } : {}),
          ...(filter.teamId !== undefined ? { teamId: filter.teamId } : {}),
        },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        select: ENDPOINT_FIELDS,
      });
      return rows.map(toRecord);
    },

    async get(endpointId) {
      const found = await row(endpointId);
      return toRecord(found);
    },

    async delete(endpointId) {
      await row(endpointId);
      await prisma.webhookEndpoint.deleteMany({ where: { id: endpointId } });
    },

    async enable(endpointId) {
      await row(endpointId);
      await prisma.webhookEndpoint.updateMany({
        where: { id: endpointId },
        data: { disabledAt: null, disabledReason: null, failingSince: null },
      });
    },

    async sendTestEvent(endpointId, now) {
      await row(endpointId);
      const deliveryId = await prisma.$transaction((tx) => recordTestEvent(tx, endpointId, now));
      // Gone between the two statements: deleted meanwhile.
      const delivery = deliveryId === undefined ? undefined : await deliveryById(deliveryId);
      if (delivery === undefined) throw new WebhookEndpointNotFoundError(endpointId);
      return delivery;
    },

    async deliveries(endpointId, limit = 50) {
      if (!UUID.test(endpointId)) return [];
      return prisma.webhookDelivery.findMany({
        where: { endpointId },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: limit,
        omit: DELIVERY_LOG_OMITS,
      });
    },

    delivery: deliveryById,

    async secretOf(endpointId) {
      const found = await row(endpointId);
      return needVault().open(found.secretSealed, sealingContext(found.id));
    },
  };
}
