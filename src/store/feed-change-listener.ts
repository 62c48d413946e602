// Hears Postgres's feed change notices (sent by the triggers of migration 20261121020000_feed_change_notify)
// on a dedicated connection, and tells its subscribers which connection's feeds changed. Whenever notices may
// have been missed, subscribers are told to forget everything, and `isLive()` says not to remember anything
// new until the listener hears again: after the connection is lost, and after a heartbeat goes unheard (a
// connection can die silently behind a NAT or a failover, and then nothing would ever be forgotten).
//
// The sessions' database URL must reach Postgres directly or through session pooling: through transaction pooling
// (PgBouncer's default mode) LISTEN is accepted but nothing is delivered, so the heartbeat fails and the web
// role keeps working without remembering lookups.
//
// Logging: a listener that stops hearing over a connection that still looks open (the heartbeat) warns, since
// nothing else would notice. A connection that ended or was refused is logged once at info and its retries at
// debug: Postgres itself being down is reported by whoever needed an answer from it (the feed route warns once
// per outage), and a warning per reconnect attempt would repeat every 10 s for as long as the outage lasts.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { PgSessions } from './pg-sessions.js';

export const FEED_CHANGES_CHANNEL = 'slotfeed_feed_changes';
/** The payload of a notice that concerns every connection (the triggers send it on TRUNCATE). */
export const EVERY_FEED_CHANGED = 'reset';
const CAUGHT_UP_PREFIX = 'caught-up:';

/**
 * Why subscribers must forget: 'every-feed-changed' is a TRUNCATE's notice, heard while listening;
 * 'unheard' means notices may have been missed (the listener connected, lost its connection, or was closed).
 */
export type ResetCause = 'every-feed-changed' | 'unheard';

export interface FeedChangeSubscriber {
  /** The feeds of this connection (or the connection itself) changed in a committed transaction. */
  changed(connectionId: string): void;
  reset(cause: ResetCause): void;
}

export interface FeedChangeListener {
  subscribe(subscriber: FeedChangeSubscriber): void;
  /** True while LISTEN is in effect and heard: every notice committed from now on will be delivered. */
  isLive(): boolean;
  /**
   * Resolves once every change committed before the call has been delivered to the subscribers: a marker
   * notice is sent, and Postgres delivers notices in commit order. Resolves at once when not live, and after
   * `heardWithinMs` at the latest (the connection is then treated as lost).
   */
  caughtUp(): Promise<void>;
  close(): Promise<void>;
}

export interface ListenerLogger {
  debug(details: Record<string, unknown>, message: string): void;
  info(details: Record<string, unknown>, message: string): void;
  warn(details: Record<string, unknown>, message: string): void;
}

export interface FeedChangeListenerOptions {
  /** Opens the listening session (a new one after each loss); from the composition root. */
  sessions: PgSessions;
  logger: ListenerLogger;
  /** First delay before reconnecting; doubles per failure up to 10 s. */
  reconnectMinMs?: number;
  /** How often a marker checks that notices still arrive. */
  heartbeatMs?: number;
  /** How long a marker may take before the connection counts as lost. */
  heardWithinMs?: number;
}

const RECONNECT_MAX_MS = 10_000;

export async function startFeedChangeListener(
  options: FeedChangeListenerOptions,
): Promise<FeedChangeListener> {
  const reconnectMinMs = options.reconnectMinMs ?? 250;
  const heardWithinMs = options.heardWithinMs ?? 5_000;
  const subscribers: FeedChangeSubscriber[] = [];
  const markers = new Map<string, () => void>();
  let client: pg.Client | undefined;
  let live = false;
  let closed = false;
  let failures = 0;
  let reconnectTimer: NodeJS.Timeout | undefined;

  const resetAll = (cause: ResetCause) => {
    for (const subscriber of subscribers) subscriber.reset(cause);
  };
  const releaseMarkers = () => {
    for (const release of markers.values()) release();
    markers.clear();
  };

  function onNotification(message: pg.Notification) {
    if (message.channel !== FEED_CHANGES_CHANNEL || message.payload === undefined) return;
    if (message.payload.startsWith(CAUGHT_UP_PREFIX)) {
      markers.get(message.payload)?.();
      markers.delete(message.payload);
    } else if (message.payload === EVERY_FEED_CHANGED) {
      resetAll('every-feed-changed');
    } else {
      for (const subscriber of subscribers) subscriber.changed(message.payload);
    }
  }

  /** `unheard`: the heartbeat went unanswered on a connection that had reported no error. */
  function lost(current: pg.Client, error: Error | undefined, unheard = false) {
    if (client !== current) return;
    client = undefined;
    live = false;
    resetAll('unheard');
    releaseMarkers();
    current.end().catch(() => undefined);
    if (closed) return;
    const delay = Math.min(RECONNECT_MAX_MS, reconnectMinMs * 2 ** failures);
    const details = { error: error?.message ?? 'connection ended', retryInMs: delay };
    if (failures === 0) {
      options.logger[unheard ? 'warn' : 'info'](
        details,
        'feed change listener lost its connection; feed lookups are not remembered until it is back',
      );
    } else {
      options.logger.debug({ ...details, attempt: failures }, 'feed change listener could not reconnect');
    }
    failures += 1;
    reconnectTimer = setTimeout(() => void connect(), delay);
  }

  async function connect(): Promise<void> {
    if (closed) return;
    const next = options.sessions({ applicationName: 'slotfeed-listen', keepAlive: true });
    next.on('error', (error) => lost(next, error));
    next.on('end', () => lost(next, undefined));
    next.on('notification', onNotification);
    client = next;
    try {
      await next.connect();
      await next.query(`LISTEN ${FEED_CHANGES_CHANNEL}`);
    } catch (error: unknown) {
      lost(next, error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (client !== next || closed) return;
    // Whatever was remembered before this point may have changed unheard.
    resetAll('unheard');
    live = true;
    if (failures > 0) options.logger.info({}, 'feed change listener reconnected');
    failures = 0;
  }

  async function caughtUp(): Promise<void> {
    const current = client;
    if (!live || current === undefined) return;
    const marker = `${CAUGHT_UP_PREFIX}${randomUUID()}`;
    const heard = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        markers.delete(marker);
        lost(current, new Error(`a marker notice went unheard for ${heardWithinMs} ms`), true);
        resolve();
      }, heardWithinMs);
      markers.set(marker, () => {
        clearTimeout(timer);
        resolve();
      });
    });
    // Not awaited: on a half-open socket the query never settles; the marker's timer decides.
    current
      .query('SELECT pg_notify($1, $2)', [FEED_CHANGES_CHANNEL, marker])
      .catch((error: unknown) => lost(current, error instanceof Error ? error : new Error(String(error))));
    await heard;
  }

  await connect();
  const heartbeat = setInterval(() => void caughtUp(), options.heartbeatMs ?? 30_000);
  heartbeat.unref();

  return {
    subscribe: (subscriber) => void subscribers.push(subscriber),
    isLive: () => live,
    caughtUp,
    async close() {
      closed = true;
      clearInterval(heartbeat);
      clearTimeout(reconnectTimer);
      const current = client;
      client = undefined;
      live = false;
      resetAll('unheard');
      releaseMarkers();
      await current?.end().catch(() => undefined);
    },
  };
}
