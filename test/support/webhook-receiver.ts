// A webhook receiver as an integrator would write one, on loopback: every request is verified with the
// `standardwebhooks` package (an implementation slotfeed did not write) against the endpoint's secret, kept,
// and acted on once per webhook-id (a redelivery changes nothing). It can be told to fail the next attempts,
// or to hold a request open, unanswered, until the test releases it (a delivery "in flight").
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  type: string;
  payload: {
    type: string;
    version: number;
    timestamp: string;
    sequence?: number;
    data: Record<string, unknown>;
  };
  /** The body as sent, byte for byte, and the webhook-signature header: for checks of the signature's own. */
  body: string;
  signature: string;
  /** What the receiver answered. */
  status: number;
}

/** A request the receiver holds open: its sender is waiting for the answer. */
export interface HeldWebhook {
  received: Omit<ReceivedWebhook, 'status'>;
  /** Answers it (204 unless told) and records it then; nothing if the sender has gone meanwhile. */
  release(status?: number): void;
}

export interface WebhookReceiver {
  url: string;
  /** Every request, in order of arrival (those answered with an error too). */
  requests: ReceivedWebhook[];
  /** The effect of each distinct message, once: the first payload seen per webhook-id that was accepted. */
  effects: Map<string, ReceivedWebhook>;
  /** Signatures that did not verify. */
  rejected: string[];
  setSecret(secret: string): void;
  /** Answer the next `count` requests with `status` (Infinity: from now on). */
  failNext(count: number, status?: number): void;
  /**
   * Holds the next verified request for which `matches` holds open, unanswered, and resolves once it has
   * arrived. It is recorded in `requests` when released, not before.
   */
  hold(matches: (received: Omit<ReceivedWebhook, 'status'>) => boolean): Promise<HeldWebhook>;
  /** Resolves when `predicate` holds for the requests so far, checking at each arrival. */
  until(predicate: (requests: ReceivedWebhook[]) => boolean): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  let verifier: Webhook | undefined;
  let failures = 0;
  let failureStatus = 500;
  const requests: ReceivedWebhook[] = [];
  const effects = new Map<string, ReceivedWebhook>();
  const rejected: string[] = [];
  const waiters: { predicate: (r: ReceivedWebhook[]) => boolean; resolve: () => void }[] = [];
  const holds: {
    matches: (received: Omit<ReceivedWebhook, 'status'>) => boolean;
    resolve: (held: HeldWebhook) => void;
  }[] = [];
  const settle = () => {
    for (const waiter of [...waiters]) {
      if (waiter.predicate(requests)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      };
      let payload: ReceivedWebhook['payload'];
      try {
        payload = verifier!.verify(body, headers) as ReceivedWebhook['payload'];
      } catch (error: unknown) {
        rejected.push(`${headers['webhook-id']}: ${(error as Error).message}`);
        response.writeHead(400).end();
        settle();
        return;
      }
      const arrived = {
        id: headers['webhook-id'],
        timestamp: headers['webhook-timestamp'],
        type: payload.type,
        payload,
        body,
        signature: headers['webhook-signature'],
      };
      const answer = (status: number) => {
        const received: ReceivedWebhook = { ...arrived, status };
        requests.push(received);
        if (status < 300 && !effects.has(received.id)) effects.set(received.id, received);
        response.writeHead(status).end();
        settle();
      };
      const hold = holds.find((h) => h.matches(arrived));
      if (hold) {
        holds.splice(holds.indexOf(hold), 1);
        hold.resolve({
          received: arrived,
          release: (status = 204) => {
            if (!response.destroyed && !response.writableEnded) answer(status);
          },
        });
        return;
      }
      const status = failures > 0 ? failureStatus : 204;
      if (failures > 0) failures -= 1;
      answer(status);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/hooks`,
    requests,
    effects,
    rejected,
    setSecret(secret) {
      verifier = new Webhook(secret);
    },
    failNext(count, status = 500) {
      failures = count;
      failureStatus = status;
    },
    hold(matches) {
      return new Promise((resolve) => holds.push({ matches, resolve }));
    },
    until(predicate) {
      if (predicate(requests)) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A held request would keep the server open.
        server.closeAllConnections();
      }),
  };
}
