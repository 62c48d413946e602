// docs/simulator.md documents every control route the simulator registers, and nothing it does not: the route
// list comes from registering control-routes.ts the way the server does, so a route added, renamed or removed
// without its section fails here.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from '@jest/globals';
import Fastify from 'fastify';
import { CONTROL_PREFIX, registerControlRoutes } from '../../src/simulator/control-routes.js';
import type { SimulatorControl } from '../../src/simulator/index.js';

const DOC = new URL('../../docs/simulator.md', import.meta.url);

/** 'METHOD /__sim/path' of every control route, as fastify registers them (HEAD is fastify's own). */
async function registeredRoutes(): Promise<string[]> {
  const app = Fastify();
  const routes: string[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push(`${method} ${route.url}`);
  });
  // Registering never calls the control; the routes only close over it.
  await app.register(async (sim) => registerControlRoutes(sim, {} as SimulatorControl), {
    prefix: CONTROL_PREFIX,
  });
  await app.ready();
  await app.close();
  return routes.sort();
}

/** Each '### `METHOD /__sim/path`' heading of the doc, with the text of its section. */
async function documentedRoutes(): Promise<Map<string, string>> {
  const doc = await readFile(DOC, 'utf8');
  const sections = new Map<string, string>();
  for (const section of doc.split(/^(?=### )/m)) {
    const heading = /^### `([A-Z]+ \/\S*)`\n/.exec(section);
    if (heading?.[1]) sections.set(heading[1], section);
  }
  return sections;
}

describe('docs/simulator.md', () => {
  it('has a section for every control route and none for a route that does not exist', async () => {
    const registered = await registeredRoutes();
    expect(registered.length).toBeGreaterThan(10);
    expect([...(await documentedRoutes()).keys()].sort()).toEqual(registered);
  });

  it("shows a curl of each route's own method and path", async () => {
    for (const [route, section] of await documentedRoutes()) {
      const [method, path] = route.split(' ') as [string, string];
      const pathPattern = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:\w+/g, "[^/?'\\s]+");
      const methodFlag = method === 'GET' ? '' : `-X ${method} `;
      const curl = new RegExp(
        `curl -s ${methodFlag}'?http://127\\.0\\.0\\.1:4010${pathPattern}(\\?|'| |$)`,
        'm',
      );
      expect({ route, curl: curl.test(section) }).toEqual({ route, curl: true });
    }
  });
});
