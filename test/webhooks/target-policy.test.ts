// Registering a webhook target: a host refused by name is refused however it is spelled. DNS reads
// "localhost." (the root's trailing dot), "LOCALHOST" and "localhost" as one name, so the registration check
// must too; before, "localhost." and "x.localhost." passed it and failed only at delivery, a day later.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { validWebhookUrl, WebhookTargetError } from '../../src/store/webhook-targets.js';

const refused = (url: string) => {
  try {
    validWebhookUrl(url, { allowPrivate: false });
    return false;
  } catch (error: unknown) {
    if (error instanceof WebhookTargetError) return true;
    throw error;
  }
};

const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/);
/** A name under .localhost (or localhost itself), in any letter case, with or without the root's dot. */
const localhostName = fc
  .record({
    labels: fc.array(label, { maxLength: 3 }),
    upper: fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
    rootDot: fc.boolean(),
  })
  .map(({ labels, upper, rootDot }) => {
    const name = [...labels, 'localhost'].join('.');
    const cased = [...name].map((c, i) => (upper[i % upper.length] ? c.toUpperCase() : c)).join('');
    return rootDot ? `${cased}.` : cased;
  });

describe('registration refuses a localhost name however it is spelled', () => {
  it('localhost., x.localhost. and LocalHost. are refused like localhost', () => {
    for (const host of ['localhost.', 'x.localhost.', 'LocalHost.', 'api.x.localhost.']) {
      expect({ host, refused: refused(`http://${host}/hooks`) }).toEqual({ host, refused: true });
    }
  });

  it('any name under .localhost, with or without the trailing dot, with or without a port', () => {
    fc.assert(
      fc.property(localhostName, fc.option(fc.integer({ min: 1, max: 65535 })), (host, port) =>
        refused(`https://${host}${port === null ? '' : `:${port}`}/x`),
      ),
    );
  });

  it('a public name with the root’s dot is accepted, as it is without', () => {
    expect(validWebhookUrl('https://hooks.example.com./x', { allowPrivate: false })).toBe(
      'https://hooks.example.com./x',
    );
    expect(refused('https://localhost.example.com./x')).toBe(false);
  });
});
