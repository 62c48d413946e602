// Packaging files read as data: docker-compose.yml (what `docker compose config` would validate: services,
// health checks, Redis settings BullMQ needs, volumes, the demo profile), the Dockerfile's essentials, and
// .env.example against the configuration's own list of variables.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { describeVariables } from '../../src/config.js';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  env_file?: (string | { path: string; required?: boolean })[];
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test?: string[] };
  depends_on?: Record<string, { condition?: string }> | string[];
  profiles?: string[];
  network_mode?: string;
}

const compose = parse(read('docker-compose.yml')) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const service = (name: string): Service => {
  const found = compose.services[name];
  if (!found) throw new Error(`no service ${name}`);
  return found;
};

/** .env.example's assignments (commented-out lines are not assignments). */
function envExample(): Map<string, string[]> {
  const assigned = new Map<string, string[]>();
  for (const line of read('.env.example').split('\n')) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (match) assigned.set(match[1]!, [...(assigned.get(match[1]!) ?? []), match[2]!]);
  }
  return assigned;
}

describe('docker-compose.yml', () => {
  it('has postgres, redis and slotfeed by default, and the simulator only in the demo profile', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['postgres', 'redis', 'simulator', 'slotfeed']);
    for (const name of ['postgres', 'redis', 'slotfeed']) expect(service(name).profiles).toBeUndefined();
    expect(service('simulator').profiles).toEqual(['demo']);
  });

  it('gives every long-running service a health check', () => {
    expect(service('postgres').healthcheck?.test?.join(' ')).toContain('pg_isready');
    expect(service('redis').healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
    expect(service('slotfeed').healthcheck?.test?.join(' ')).toContain('/healthz');
    expect(service('simulator').healthcheck?.test?.join(' ')).toContain('/__sim/');
  });

  it('runs Redis with noeviction and AOF, as BullMQ needs', () => {
    const command = service('redis').command ?? [];
    expect(command[command.indexOf('--maxmemory-policy') + 1]).toBe('noeviction');
    expect(command[command.indexOf('--appendonly') + 1]).toBe('yes');
  });

  it('keeps data in named volumes', () => {
    expect(Object.keys(compose.volumes).sort()).toEqual(['postgres-data', 'redis-data']);
    expect(service('postgres').volumes).toEqual(['postgres-data:/var/lib/postgresql/data']);
    expect(service('redis').volumes).toEqual(['redis-data:/data']);
  });

  it('builds slotfeed from the Dockerfile, configures it from .env, and starts it after healthy services', () => {
    const slotfeed = service('slotfeed');
    expect(slotfeed.build).toBe('.');
    expect(slotfeed.env_file?.map((f) => (typeof f === 'string' ? f : f.path))).toEqual(['.env']);
    expect(slotfeed.depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
    });
    expect(slotfeed.environment).toMatchObject({
      WEB_HOST: '0.0.0.0',
      WEB_PORT: '3000',
      DATABASE_URL: expect.stringContaining('@postgres:5432/'),
      REDIS_URL: 'redis://redis:6379',
    });
    expect(slotfeed.ports).toContain('127.0.0.1:3000:3000');
  });

  it('publishes ports on loopback only', () => {
    for (const [name, s] of Object.entries(compose.services)) {
      for (const port of s.ports ?? []) expect(`${name} ${port}`).toMatch(/^\S+ 127\.0\.0\.1:\d+:\d+$/);
    }
  });

  it('runs the demo simulator where both the browser and slotfeed reach the CALENDBOOK_* URLs of .env.example', () => {
    const simulator = service('simulator');
    const command = simulator.command ?? [];
    const option = (name: string) => command[command.indexOf(name) + 1];
    expect(command[0]).toBe('simulator');
    expect(option('--host')).toBe('0.0.0.0');
    expect(simulator.network_mode).toBe('service:slotfeed');

    const env = envExample();
    const value = (name: string) => env.get(name)?.[0] ?? '';
    const port = option('--port');
    expect(value('CALENDBOOK_BASE_URL')).toBe(`http://127.0.0.1:${port}/api`);
    expect(value('CALENDBOOK_AUTH_URL')).toBe(`http://127.0.0.1:${port}/auth`);
    expect(service('slotfeed').ports).toContain(`127.0.0.1:${port}:${port}`);
    expect(option('--client-id')).toBe(value('CALENDBOOK_CLIENT_ID'));
    expect(option('--client-secret')).toBe(value('CALENDBOOK_CLIENT_SECRET'));
    expect(option('--redirect-uri')).toBe(value('CALENDBOOK_REDIRECT_URI'));
    expect(value('CALENDBOOK_REDIRECT_URI')).toBe(`${value('PUBLIC_BASE_URL')}/oauth/callback`);
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');

  it('is multi-stage on Node 24, production dependencies only, non-root, with a /healthz health check', () => {
    expect(dockerfile.match(/^FROM node:24\S* AS \w+$/gm)).toHaveLength(2);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(dockerfile).toMatch(/^USER (?!root\b)\w+$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK [\s\S]*\/healthz/m);
  });

  it('runs slotfeed with the memory settings `npm start` uses (the benchmark measured RSS with them)', () => {
    const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('FROM '));
    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start;
    expect(runtimeStage).toMatch(/^ENV .*\bMALLOC_ARENA_MAX=2\b/m);
    expect(runtimeStage).toMatch(/^ENV .*\bNODE_OPTIONS=--max-semi-space-size=4\b/m);
    expect(start).toBe('MALLOC_ARENA_MAX=2 node --max-semi-space-size=4 dist/cli.js start');
  });
});

describe('.env.example', () => {
  const env = envExample();

  it('lists every variable once, with its default when it has one', () => {
    for (const variable of describeVariables()) {
      expect([variable.name, env.get(variable.name)?.length]).toEqual([variable.name, 1]);
      if (variable.default !== undefined) {
        expect([variable.name, env.get(variable.name)?.[0]]).toEqual([variable.name, variable.default]);
      }
    }
  });

  it('sets nothing slotfeed does not read, and leaves the secrets to be made', () => {
    const known = new Set(describeVariables().map((v) => v.name as string));
    expect([...env.keys()].filter((name) => !known.has(name))).toEqual([]);
    expect(env.get('TOKEN_ENCRYPTION_KEY')).toEqual(['']);
    expect(env.get('ADMIN_TOKEN')).toEqual(['']);
  });
});
