import { describe, expect, it } from '@jest/globals';
import { Releasers } from '../../src/lib/releasers.js';

describe('Releasers', () => {
  it('releases newest first, keeps going past a failure, and runs each step once when called twice', async () => {
    const order: string[] = [];
    const releasers = new Releasers();
    releasers.add('redis', () => void order.push('redis'));
    releasers.add('worker', async () => {
      order.push('worker');
      throw new Error('worker close failed');
    });
    releasers.add('web', () => void order.push('web'));

    const [first, second] = await Promise.all([releasers.releaseAll(), releasers.releaseAll()]);

    expect(order).toEqual(['web', 'worker', 'redis']);
    expect(first.map((e) => e.message)).toEqual(['worker close failed']);
    expect(second).toBe(first);
    expect(() => releasers.add('late', () => undefined)).toThrow(/shutdown has begun/);
  });
});
