// The ports tests draw for their servers: never one a browser refuses to load pages from (a page test's web role
// on 10080 failed with ERR_UNSAFE_PORT), and always below the ephemeral range with room for a cluster bus port.
import { expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { BROWSER_BLOCKED_PORTS, CLUSTER_BUS_OFFSET, reservePort } from './reserved-port.js';

const ephemeralStart = Number(
  readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
);

it('draws again when the draw lands on a port browsers refuse', async () => {
  const lowest = 10_000;
  const span = ephemeralStart - CLUSTER_BUS_OFFSET - lowest;
  const blocked = [...BROWSER_BLOCKED_PORTS][0]!;
  // The first draw lands on the blocked port, the next anywhere.
  const draws = [(blocked - lowest + 0.5) / span, 0.5];
  const port = await reservePort(() => draws.shift() ?? Math.random());
  expect(port).not.toBe(blocked);
  expect(draws).toHaveLength(0);
  expect(port + CLUSTER_BUS_OFFSET).toBeLessThan(ephemeralStart);
});
