// Hears Postgres's feed change notices (sent by the triggers of migration 20261121020000_feed_change_notify)
// on a dedicated connection, and tells its subscribers which connection's feeds changed. While the connection
// is down, nothing can be trusted to be heard: subscribers are told to forget everything, and `isLive()` says
// not to remember anything new until the listener is back.
import { randomUUID } from 'node:crypto';
import pg from 'pg';

export const FEED_CHANGES_CHANNEL = 'slotfeed_feed_changes';
const CAUGHT_UP_PREFIX = 'caught-up:';
const CAUGHT_UP_TIMEOUT_MS = 5_000;
const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 10_000;

export interface FeedChangeSubscriber {
  /** The feeds of this connection (or the connection itself) changed in a committed transaction. */
  changed(connectionId: string): void;
  /** Notices may have been missed (the listener connected, lost its connection, or was closed). */
  reset(): void;
}

export interface FeedChangeListener {
  subscribe(subscriber: FeedChangeSubscriber): void;
  /** True while LISTEN is in effect: every notice committed from now on will be heard. */
  isLive(): boolean;
  /**
   * Resolves once every change committed before the call has been delivered to the subscribers: a marker
   * notice is sent, and Postgres delivers notices in commit order. Resolves at once when not live.
   */
  caughtUp(): Promise<void>;
  close(): Promise<void>;
}

export interface ListenerLogger {
  info(details: Record<string, unknown>, message: string): void;
  warn(details: Record<string, unknown>, message: string): void;
}

export async function startFeedChangeListener(options: {
  databaseUrl: string;
  logger: ListenerLogger;
}): Promise<FeedChangeListener> {
  const subscribers: FeedChangeSubscriber[] = [];
  const markers = new Map<string, () => void>();
  let client: pg.Client | undefined;
  let live = false;
  let closed = false;
  let failures = 0;
  let reconnectTimer: NodeJS.Timeout | undefined;

  const resetAll = () => {
    for (const subscriber of subscribers) subscriber.reset();
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
      return;
    }
    for (const subscriber of subscribers) subscriber.changed(message.payload);
  }

  function lost(current: pg.Client, error: Error | undefined) {
    if (client !== current) return;
    client = undefined;
    live = false;
    resetAll();
    releaseMarkers();
    current.end().catch(() => undefined);
    if (closed) return;
    const delay = Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** failures);
    failures += 1;
    options.logger.warn(
      { error: error?.message ?? 'connection ended', retryInMs: delay },
      'feed change listener lost its connection; feed lookups are not cached until it is back',
    );
    reconnectTimer = setTimeout(() => void connect(), delay);
  }

  async function connect(): Promise<void> {
    if (closed) return;
    const next = new pg.Client({
      connectionString: options.databaseUrl,
      application_name: 'slotfeed-listen',
    });
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
    resetAll();
    live = true;
    if (failures > 0) options.logger.info({}, 'feed change listener reconnected');
    failures = 0;
  }

  await connect();

  return {
    subscribe: (subscriber) => void subscribers.push(subscriber),
    isLive: () => live,
    async caughtUp() {
      const current = client;
      if (!live || current === undefined) return;
      const marker = `${CAUGHT_UP_PREFIX}${randomUUID()}`;
      const heard = new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          markers.delete(marker);
          // Not heard in time: what is remembered cannot be vouched for.
          resetAll();
          resolve();
        }, CAUGHT_UP_TIMEOUT_MS);
        markers.set(marker, () => {
          clearTimeout(timer);
          resolve();
        });
      });
      await current.query('SELECT pg_notify($1, $2)', [FEED_CHANGES_CHANNEL, marker]).catch(() => undefined);
      await heard;
    },
    async close() {
      closed = true;
      clearTimeout(reconnectTimer);
      const current = client;
      client = undefined;
      live = false;
      resetAll();
      releaseMarkers();
      await current?.end().catch(() => undefined);
    },
  };
}
