// /__sim/ HTTP control API: JSON in, JSON out, the same operations as SimulatorControl. Never faulted, never
// counted, no auth (the simulator is a local test double).
import type { FastifyInstance } from 'fastify';
import type { SimulatorControl } from './types.js';
import { SimulatorControlError } from './types.js';

/** Where the control routes are mounted; docs/simulator.md documents each under it. */
export const CONTROL_PREFIX = '/__sim';

type Body = Record<string, unknown>;

const bodyOf = (body: unknown): Body => (typeof body === 'object' && body !== null ? (body as Body) : {});

function requiredString(body: Body, name: string): string {
  const value = body[name];
  if (typeof value !== 'string' || value === '') throw new SimulatorControlError(400, `${name} is required`);
  return value;
}

export function registerControlRoutes(app: FastifyInstance, control: SimulatorControl): void {
  // These answers are read with curl in a terminal (README, docs/simulator.md): a JSON body ends with a newline,
  // so the shell's next prompt starts a line of its own rather than after `{"booked":true}`.
  app.addHook('onSend', async (_request, reply, payload) =>
    typeof payload === 'string' &&
    payload !== '' &&
    !payload.endsWith('\n') &&
    String(reply.getHeader('content-type') ?? '').startsWith('application/json')
      ? `${payload}\n`
      : payload,
  );
  app.get('/users', () => control.listUsers());

  app.post('/bookings', (request, reply) => {
    const body = bodyOf(request.body);
    control.book(requiredString(body, 'eventId'), requiredString(body, 'start'));
    return reply.code(201).send({ booked: true });
  });

  app.delete('/bookings', (request, reply) => {
    const body = bodyOf(request.body);
    control.free(requiredString(body, 'eventId'), requiredString(body, 'start'));
    return reply.code(204).send();
  });

  app.put('/users/:userId/weekly-hours', (request, reply) => {
    const { userId } = request.params as { userId: string };
    control.setWeeklyHours(userId, bodyOf(request.body));
    return reply.code(204).send();
  });

  app.put('/users/:userId/disabled-dates', (request, reply) => {
    const { userId } = request.params as { userId: string };
    control.setDisabledDates(userId, bodyOf(request.body));
    return reply.code(204).send();
  });

  app.patch('/users/:userId/events/:eventId', (request) => {
    const { userId, eventId } = request.params as { userId: string; eventId: string };
    return control.updateEventType(userId, eventId, bodyOf(request.body));
  });

  app.delete('/users/:userId/events/:eventId', (request, reply) => {
    const { userId, eventId } = request.params as { userId: string; eventId: string };
    control.deleteEventType(userId, eventId);
    return reply.code(204).send();
  });

  app.post('/users/:userId/revoke', (request) => {
    const { userId } = request.params as { userId: string };
    return { revoked: control.revokeGrants(userId) };
  });

  app.get('/faults', () => control.getFaults());
  app.put('/faults', (request) => control.setFaults(bodyOf(request.body)));

  app.get('/clock', () => ({ now: control.now().toISOString() }));
  app.put('/clock', (request) => {
    control.setClock(requiredString(bodyOf(request.body), 'now'));
    return { now: control.now().toISOString() };
  });
  app.post('/clock/advance', (request) => {
    control.advanceClock(bodyOf(request.body).seconds as number);
    return { now: control.now().toISOString() };
  });

  app.get('/changes', () => control.changes());
  app.get('/calls', () => control.callCounts());
  app.get('/calls/by-user', () => control.callCountsByUser());
  app.get('/calls/arrivals', () => control.callArrivals());
  app.delete('/calls', (_request, reply) => {
    control.resetCallCounts();
    return reply.code(204).send();
  });

  app.get('/slots', (request) => {
    const query = request.query as Record<string, unknown>;
    return control.slotsFor(
      requiredString(query, 'eventId'),
      requiredString(query, 'from'),
      requiredString(query, 'to'),
    );
  });
}
