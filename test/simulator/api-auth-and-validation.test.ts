import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SignJWT, decodeJwt } from 'jose';
import type { RunningSimulator } from '../../src/simulator/index.js';
import type { TokenSet } from './sim-client.js';
import { REFERENCE_NOW, apiGet, connectUser, startFixedSimulator } from './sim-client.js';

let sim: RunningSimulator;
let tokens: TokenSet;
let ownEventId: string;
let otherUsersEventId: string;

beforeAll(async () => {
  sim = await startFixedSimulator({ accessTokenTtlSeconds: 300 });
  tokens = await connectUser(sim, 0);
  const users = sim.control.listUsers();
  ownEventId = users[0]?.event_types[0]?.event_id ?? '';
  otherUsersEventId = users[1]?.event_types[0]?.event_id ?? '';
});
afterAll(() => sim.close());

async function expectInvalidToken(response: Response) {
  expect(response.status).toBe(401);
  expect(response.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
  const body = (await response.json()) as { error: string; error_description: string };
  expect(body.error).toBe('invalid_token');
  expect(body.error_description).not.toContain(tokens.access_token);
}

describe('bearer authentication', () => {
  it('accepts a fresh token on every endpoint', async () => {
    for (const path of [
      '/events',
      '/users/me',
      `/calendars/${ownEventId}?start_date=2026-03-02&timezone=UTC`,
      `/calendars/${ownEventId}/slots?date=2026-03-03&timezone=UTC`,
    ]) {
      expect((await apiGet(sim, path, tokens.access_token)).status).toBe(200);
    }
  });

  it('401s a missing token and a non-Bearer header', async () => {
    await expectInvalidToken(await apiGet(sim, '/events', null));
    const basic = await fetch(`${sim.baseUrl}/events`, { headers: { authorization: 'Basic Zm9vOmJhcg==' } });
    await expectInvalidToken(basic);
    await expectInvalidToken(await apiGet(sim, '/events', 'not-a-jwt'));
  });

  it('401s a token signed with another key', async () => {
    const claims = decodeJwt(tokens.access_token);
    const forged = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('some-other-secret-of-32-bytes!!!'));
    await expectInvalidToken(await apiGet(sim, '/users/me', forged));
  });

  it('401s once the sim clock passes exp, and not a second before', async () => {
    sim.control.advanceClock(299);
    try {
      expect((await apiGet(sim, '/users/me', tokens.access_token)).status).toBe(200);
      sim.control.advanceClock(1);
      await expectInvalidToken(await apiGet(sim, '/users/me', tokens.access_token));
    } finally {
      sim.control.setClock(REFERENCE_NOW);
    }
  });

  it('401s the access tokens of a revoked grant', async () => {
    const victim = await connectUser(sim, 2);
    expect((await apiGet(sim, '/events', victim.access_token)).status).toBe(200);
    sim.control.revokeGrants(sim.users[2]?.id ?? '');
    await expectInvalidToken(await apiGet(sim, '/events', victim.access_token));
  });
});

describe('calendar endpoint validation', () => {
  const overview = (query: string, eventId = ownEventId) =>
    apiGet(sim, `/calendars/${eventId}?${query}`, tokens.access_token);
  const slots = (query: string, eventId = ownEventId) =>
    apiGet(sim, `/calendars/${eventId}/slots?${query}`, tokens.access_token);

  async function expectBadRequest(response: Response, mentions: string) {
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: string; message: string };
    expect(body.error).toBe('bad_request');
    expect(body.message).toContain(mentions);
  }

  it.each([
    ['timezone=UTC', 'start_date'],
    ['start_date=&timezone=UTC', 'start_date'],
    ['start_date=2026-02-30&timezone=UTC', 'start_date'],
    ['start_date=2026-3-2&timezone=UTC', 'start_date'],
    ['start_date=20260302&timezone=UTC', 'start_date'],
    ['start_date=2026-03-02', 'timezone'],
    ['start_date=2026-03-02&timezone=Mars/Olympus', 'timezone'],
    ['start_date=2026-03-02&timezone=UTC&period=1y', 'period'],
    ['start_date=2026-03-02&timezone=UTC&period=m', 'period'],
    ['start_date=2026-03-02&timezone=UTC&period=', 'period'],
    ['start_date=2026-03-02&timezone=UTC&period=2m', 'period'],
    ['start_date=2026-03-02&timezone=UTC&period=9w', 'period'],
    ['start_date=2026-01-01&timezone=UTC&period=59d', 'period'],
    ['start_date=2026-03-02&timezone=UTC&period=0d', 'period'],
    ['start_date=2026-03-02&start_date=2026-03-03&timezone=UTC', 'start_date'],
  ])('overview rejects %s', async (query, mentions) => {
    await expectBadRequest(await overview(query), mentions);
  });

  it.each([
    ['start_date=2026-03-02&timezone=UTC&period=1m'],
    ['start_date=2026-03-02&timezone=UTC&period=8w'],
    ['start_date=2026-01-01&timezone=UTC&period=58d'],
    ['start_date=2026-03-02&timezone=Asia/Kolkata'],
  ])('overview accepts %s', async (query) => {
    expect((await overview(query)).status).toBe(200);
  });

  it.each([
    ['timezone=UTC', 'date'],
    ['date=2026-13-01&timezone=UTC', 'date'],
    ['date=2026-03-03', 'timezone'],
    ['date=2026-03-03&timezone=Berlin', 'timezone'],
  ])('slots rejects %s', async (query, mentions) => {
    await expectBadRequest(await slots(query), mentions);
  });

  it('404s an unknown event and another user’s event on both calendar endpoints', async () => {
    const query = 'start_date=2026-03-02&timezone=UTC';
    for (const eventId of ['evt_doesnotexist', otherUsersEventId]) {
      expect((await overview(query, eventId)).status).toBe(404);
      const response = await slots('date=2026-03-03&timezone=UTC', eventId);
      expect(response.status).toBe(404);
      expect(((await response.json()) as { error: string }).error).toBe('not_found');
    }
  });

  it('lists all event types, including disabled and secret ones, in the 2.1 shape', async () => {
    const events = (await (await apiGet(sim, '/events', tokens.access_token)).json()) as Record<
      string,
      unknown
    >[];
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(events.some((e) => e.enabled === false)).toBe(true);
    expect(events.some((e) => e.is_secret === true)).toBe(true);
    for (const event of events) {
      expect(Object.keys(event).sort()).toEqual(
        [
          'booking_type',
          'buffer_after_minutes',
          'buffer_before_minutes',
          'color',
          'description',
          'duration_minutes',
          'enabled',
          'event_id',
          'is_secret',
          'is_team',
          'location',
          'redirect_url',
          'title',
          'url',
        ].sort(),
      );
      expect(event.color).toMatch(/^#[0-9a-f]{6}$/);
      expect(event.url).toMatch(/^https:\/\/book\.calendbook\.test\/[a-z0-9-]+\/[a-z0-9-]+$/);
      expect(Number(event.duration_minutes) % 5).toBe(0);
    }
  });

  it('a disabled event type answers 200 with no availability and no slots', async () => {
    const disabled = sim.control.listUsers()[0]?.event_types.find((e) => !e.enabled);
    expect(disabled).toBeDefined();
    const body = (await (
      await overview('start_date=2026-03-02&timezone=UTC', disabled?.event_id)
    ).json()) as {
      availability: { available_dates: string[]; last_available_date: string | null };
    };
    expect(body.availability.available_dates).toEqual([]);
    expect(body.availability.last_available_date).toBeNull();
    const slotBody = (await (await slots('date=2026-03-03&timezone=UTC', disabled?.event_id)).json()) as {
      slot_list: object;
    };
    expect(slotBody.slot_list).toEqual({});
  });

  it('the profile has the 2.2 shape', async () => {
    const me = (await (await apiGet(sim, '/users/me', tokens.access_token)).json()) as Record<
      string,
      unknown
    >;
    expect(me).toEqual({
      name: sim.users[0]?.name,
      email: sim.users[0]?.email,
      avatar: expect.stringMatching(/^https:\/\//),
      language: expect.any(String),
      timezone: 'Europe/Berlin',
      notification_settings: {
        guest_notification_broker: expect.any(String),
        notification_broker: expect.any(String),
        pending_actions: expect.any(String),
      },
    });
  });
});
