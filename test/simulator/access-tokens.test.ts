// Access tokens are checked once for their signature and claims and on every call for their expiry
// (tokens.ts): a token read many times keeps being refused once it expires, and a forged one never passes.
import { describe, expect, it } from '@jest/globals';
import { createSimClock } from '../../src/simulator/clock.js';
import { createAccessTokenIssuer } from '../../src/simulator/tokens.js';

const T0 = new Date('2026-03-02T09:00:00Z');

function issuer() {
  const clock = createSimClock(() => T0);
  const tokens = createAccessTokenIssuer({ issuer: () => 'http://127.0.0.1:4010', ttlSeconds: 3600, clock });
  return { clock, tokens };
}

describe('the simulator’s access tokens', () => {
  it('read many times, a token still expires at its exp, not later', async () => {
    const { clock, tokens } = issuer();
    const { token } = await tokens.issue({ userId: 'u1', clientId: 'c', scope: '' });
    for (let i = 0; i < 3; i++)
      expect(await tokens.verify(token)).toMatchObject({ ok: true, claims: { sub: 'u1' } });
    clock.advance(3599);
    expect((await tokens.verify(token)).ok).toBe(true);
    clock.advance(1);
    expect(await tokens.verify(token)).toEqual({ ok: false, reason: 'The access token expired' });
  });

  it('refuses a token whose payload was changed after it was verified once', async () => {
    const { tokens } = issuer();
    const { token } = await tokens.issue({ userId: 'u1', clientId: 'c', scope: '' });
    expect((await tokens.verify(token)).ok).toBe(true);
    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>;
    const forged = [
      header,
      Buffer.from(JSON.stringify({ ...claims, sub: 'u2' })).toString('base64url'),
      signature,
    ];
    expect(await tokens.verify(forged.join('.'))).toEqual({
      ok: false,
      reason: 'The access token signature is invalid',
    });
  });

  it('refuses a token another world signed', async () => {
    const a = issuer();
    const b = issuer();
    const { token } = await a.tokens.issue({ userId: 'u1', clientId: 'c', scope: '' });
    expect((await b.tokens.verify(token)).ok).toBe(false);
  });
});
