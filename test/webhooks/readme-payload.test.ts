// The example webhook payload in docs/api-and-webhooks.md is what slotfeed sends for the change it describes:
// one Intro call slot opened on 4 March, two touching ones closed on 3 March, seen by a sync at 09:15 UTC.
import { readFileSync } from 'node:fs';
import { expect, it } from '@jest/globals';
import { availabilityChanged, testEvent, webhookPayload } from '../../src/store/webhook-events.js';

const DOC = readFileSync(new URL('../../docs/api-and-webhooks.md', import.meta.url), 'utf8');

it('the availability.changed example in docs/api-and-webhooks.md is a payload slotfeed sends', () => {
  const section = DOC.slice(DOC.indexOf('\n## Webhooks\n'));
  const example = JSON.parse(/```json\n([\s\S]*?)```/.exec(section)![1]!) as {
    sequence: number;
    data: { connectionId: string };
  };
  const slot = (start: string) => ({
    eventId: 'evt_intro',
    startsAt: new Date(start),
    endsAt: new Date(Date.parse(start) + 30 * 60_000),
  });
  const event = availabilityChanged({
    connectionId: example.data.connectionId,
    at: new Date('2026-03-02T09:15:00.000Z'),
    opened: [slot('2026-03-04T14:00:00Z')],
    closed: [slot('2026-03-03T10:00:00Z'), slot('2026-03-03T10:30:00Z')],
  })!;
  expect(webhookPayload(event, { teamId: null, sequence: example.sequence })).toEqual(example);
});

it('the webhook.test example in docs/api-and-webhooks.md is a payload slotfeed sends', () => {
  const block = /```json\n(\{\n {2}"type": "webhook\.test"[\s\S]*?)```/.exec(DOC);
  expect(block).not.toBeNull();
  const example = JSON.parse(block![1]!) as {
    sequence: number;
    data: { connectionId: string; endpointId: string };
  };
  const event = testEvent({
    endpointId: example.data.endpointId,
    connectionId: example.data.connectionId,
    at: new Date('2026-03-02T09:15:00.000Z'),
  });
  expect(webhookPayload(event, { teamId: null, sequence: example.sequence })).toEqual(example);
});
