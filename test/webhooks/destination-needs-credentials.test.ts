// destination.needs_credentials end to end: a real Radicale whose password changes under a CalDAV destination, the
// worker role's push refused, and the webhook a receiver verifies with `standardwebhooks`. What an integrator
// relies on: one event per change of state (however often the destination is asked to push meanwhile), sent to
// the endpoints of the feed's owner (its connection's, or its team's for a team feed), naming the destination and
// why, and never a password.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { dispatchDuePushes } from '../../src/destinations/caldav-queue.js';
import type { CaldavDestinationRecord } from '../../src/store/caldav-destinations.js';
import { startCalDavServer, type CalDavTestServer } from '../support/caldav-servers.js';
import type { FakeClock } from '../support/sync-harness.js';
import { waitFor } from '../support/wait-for.js';
import { createWebHarness, type WebHarness } from '../support/web-harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { patient } from '../support/patience.js';

const EVENT = 'destination.needs_credentials';

let server: CalDavTestServer;
let h: WebHarness;
let connectionId: string;
let feedId: string;
let teamId: string;
let teamFeedId: string;
/** The connection's endpoint and the team's, each with a receiver of its own (each verifies its own secret). */
const endpoints: Record<'connection' | 'team', { id: string; receiver: WebhookReceiver }> = {} as never;

const clock = () => h.sync.clock as FakeClock;
const service = () => h.sync.services.caldavDestinations;
const store = () => h.sync.stores.caldavDestinations;
const credentials = () => ({ username: server.username, password: server.password });

/** The outbox's rows of the event for one endpoint: what will be delivered, whatever the queue does. */
const written = (endpoint: 'connection' | 'team') =>
  h.sync.db.prisma.webhookDelivery.findMany({
    where: { endpointId: endpoints[endpoint].id, eventType: EVENT },
    orderBy: { createdAt: 'asc' },
  });

const settled = (destinationId: string) =>
  waitFor(
    () => store().get(destinationId),
    (d) => d.pendingChanges === 0 && d.reconcileRequestedAt === null && d.lastPushAt !== null,
    { what: `destination ${destinationId} pushed` },
  );

/**
 * The password changes on the server; the next push that asks it anything is refused. A reconciliation is asked
 * for here because it always lists the calendar, where a push with nothing to write sends no request.
 */
async function passwordChangesUnder(destination: CaldavDestinationRecord) {
  await server.changePassword();
  await store().requestReconcile(destination.id, clock().now());
  return waitFor(
    () => store().get(destination.id),
    (d) => d.state === 'needs_credentials',
    { what: 'needs_credentials' },
  );
}

beforeAll(async () => {
  server = await startCalDavServer('radicale');
  h = await createWebHarness('destination_needs_credentials', {
    env: {
      CALDAV_ALLOW_PRIVATE_TARGETS: 'true',
      CALDAV_DISPATCH_INTERVAL_MS: '100',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_DISPATCH_INTERVAL_MS: '100',
    },
  });
  const connected = await h.connectViaWeb(h.sync.sim.users[0]!.email);
  connectionId = connected.connectionId;
  feedId = (await h.feeds.findByToken(connected.token!))!.id;
  await h.syncNow(connectionId);
  const team = await h.sync.stores.teams.create('needs-credentials-team');
  teamId = team.id;
  await h.sync.stores.teams.addMembers(teamId, [connectionId]);
  teamFeedId = (await h.feeds.createTeamFeed({ teamId, options: { mode: 'any', days: 7 } })).feed.id;
  for (const [name, owner] of [
    ['connection', { connectionId }],
    ['team', { teamId }],
  ] as const) {
    const receiver = await startWebhookReceiver();
    const made = await h.sync.stores.webhooks.create({ owner, url: receiver.url });
    receiver.setSecret(made.secret);
    endpoints[name] = { id: made.endpoint.id, receiver };
  }
  await h.sync.startRoles(['worker']);
}, patient(60_000));
afterAll(async () => {
  for (const { receiver } of Object.values(endpoints)) await receiver.close();
  await h?.close();
  await server?.close();
});

describe('destination.needs_credentials', () => {
  it('is an event an endpoint subscribes to by default', async () => {
    const endpoint = await h.sync.stores.webhooks.get(endpoints.connection.id);
    expect(endpoint.events).toContain(EVENT);
  });

  it('a password changed on the server: the connection’s endpoint hears it once, with why and without a secret', async () => {
    const destination = await service().add({ feedId, serverUrl: server.baseUrl, ...credentials() });
    await settled(destination.id);
    const old = server.password;
    const stuck = await passwordChangesUnder(destination);
    // Written with the state's change (the outbox), then delivered.
    expect(await written('connection')).toHaveLength(1);

    const { receiver } = endpoints.connection;
    await receiver.until((r) => r.some((x) => x.type === EVENT && x.status < 300));
    const [heard] = receiver.requests.filter((x) => x.type === EVENT);
    expect(heard!.payload).toEqual({
      type: EVENT,
      version: 1,
      timestamp: expect.any(String),
      sequence: expect.any(Number),
      data: { destinationId: destination.id, feedId, connectionId, reason: stuck.lastError },
    });
    expect(stuck.lastError).toMatch(/credentials/);
    expect(heard!.body).not.toContain(old);
    expect(heard!.body).not.toContain(server.password);
    expect(receiver.rejected).toEqual([]);

    // Hours on, with changes pending, asked to push, and refused once more by a push that raced the first:
    // the state has not changed again, so nothing more is written for any endpoint.
    clock().advance(6 * 3600);
    await store().requestPush(destination.id, clock().now());
    await dispatchDuePushes(store(), h.sync.clients.caldavQueue, 3 * 3600_000, clock().now());
    await store().pushFailed(
      destination.id,
      { state: 'needs_credentials', error: 'refused again', retryAt: null },
      clock().now(),
    );
    expect(await written('connection')).toHaveLength(1);
    // Not the team's: the destination writes the connection's own feed.
    expect(await written('team')).toEqual([]);

    // New credentials: active and pushed again; the next refusal is a new change of state, and heard.
    await service().replaceCredentials(destination.id, credentials());
    await settled(destination.id);
    expect((await store().get(destination.id)).state).toBe('active');
    await passwordChangesUnder(destination);
    expect(await written('connection')).toHaveLength(2);
    await receiver.until((r) => r.filter((x) => x.type === EVENT && x.status < 300).length === 2);
    await service().remove(destination.id, { keepEvents: true });
  });

  it('a team feed’s destination: the team’s endpoint hears it, with the team’s id', async () => {
    const destination = await service().add({
      feedId: teamFeedId,
      serverUrl: server.baseUrl,
      calendarName: 'Team',
      ...credentials(),
    });
    await settled(destination.id);
    const connectionBefore = (await written('connection')).length;
    const stuck = await passwordChangesUnder(destination);
    expect(await written('team')).toHaveLength(1);

    const { receiver } = endpoints.team;
    await receiver.until((r) => r.some((x) => x.type === EVENT && x.status < 300));
    const heard = receiver.requests.filter((x) => x.type === EVENT);
    expect(heard).toHaveLength(1);
    expect(heard[0]!.payload.data).toEqual({
      teamId,
      destinationId: destination.id,
      feedId: teamFeedId,
      reason: stuck.lastError,
    });
    expect(await written('connection')).toHaveLength(connectionBefore);
  });
});
