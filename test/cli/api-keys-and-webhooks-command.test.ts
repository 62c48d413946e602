// `slotfeed api-keys …` and `slotfeed webhooks …`: a key and a signing secret are printed once and stored only
// hashed or sealed; scopes and owners are checked; listing needs no encryption key.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCapturedCli } from '../support/cli-run.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let db: TestDatabase;
let env: Record<string, string>;
const ada = randomUUID();
const KEY = randomBytes(32).toString('base64');

beforeAll(async () => {
  db = await createTestDatabase('api_webhooks_cli');
  await db.prisma.connection.create({
    data: { id: ada, upstreamUserId: 'usr_ada', email: 'ada@example.test', displayName: 'Ada' },
  });
  env = { DATABASE_URL: db.url, LOG_LEVEL: 'silent' };
});
afterAll(async () => {
  await db.drop();
});

const slotfeed = (args: string[], extra: Record<string, string> = {}) =>
  runCapturedCli({ ...env, ...extra }, args);

describe('slotfeed api-keys', () => {
  it('creates a key shown once, lists it without it, and revokes it', async () => {
    await slotfeed(['teams', 'create', 'Ops', ada]);
    const made = await slotfeed([
      'api-keys',
      'create',
      '--label',
      'dashboard',
      '--connection',
      ada,
      '--team',
      'Ops',
    ]);
    expect(made).toMatchObject({ code: 0 });
    const key = /sfk_[\w-]{43}/.exec(made.stdout)![0];
    const listed = await slotfeed(['api-keys', 'list', '--format', 'json']);
    expect(listed.stdout).not.toContain(key);
    const [record] = JSON.parse(listed.stdout).apiKeys;
    expect(record).toMatchObject({ label: 'dashboard', connectionIds: [ada] });
    expect(record.teamIds).toHaveLength(1);
    expect((await slotfeed(['api-keys', 'revoke', record.id])).stdout).toContain('revoked');
    expect((await slotfeed(['api-keys', 'list', '--active'])).stdout).toContain('No API keys');
  });

  it('lists every key with its state: never used, used when, revoked when; --active only the usable ones', async () => {
    const create = async (label: string) => {
      const made = await slotfeed(['api-keys', 'create', '--label', label, '--connection', ada]);
      return /API key (\S+)/.exec(made.stdout)![1]!;
    };
    const idle = await create('idle');
    const used = await create('used');
    const revoked = await create('retired');
    await db.prisma.apiKey.update({
      where: { id: used },
      data: { lastUsedAt: new Date('2026-03-02T09:15:00Z') },
    });
    await db.prisma.apiKey.update({
      where: { id: revoked },
      data: { revokedAt: new Date('2026-03-03T10:30:00Z') },
    });

    const rowOf = (text: string, id: string) => text.split('\n').find((line) => line.startsWith(id));
    const all = (await slotfeed(['api-keys', 'list'])).stdout;
    expect(rowOf(all, idle)).toMatch(/never used$/);
    expect(rowOf(all, used)).toMatch(/used 2026-03-02T09:15Z$/);
    expect(rowOf(all, revoked)).toMatch(/revoked 2026-03-03T10:30Z$/);

    const active = (await slotfeed(['api-keys', 'list', '--active'])).stdout;
    expect(rowOf(active, idle)).toBeDefined();
    expect(rowOf(active, used)).toBeDefined();
    expect(rowOf(active, revoked)).toBeUndefined();
  });

  it('revoking a key a second time says when it was revoked, keeps that time and exits 0', async () => {
    const made = await slotfeed(['api-keys', 'create', '--label', 'twice', '--connection', ada]);
    const id = /API key (\S+)/.exec(made.stdout)![1]!;
    expect(await slotfeed(['api-keys', 'revoke', id])).toMatchObject({
      code: 0,
      stdout: `API key ${id} revoked; requests with it now get 401.\n`,
    });
    const revokedAt = new Date('2026-03-03T10:30:00Z');
    await db.prisma.apiKey.update({ where: { id }, data: { revokedAt } });

    expect(await slotfeed(['api-keys', 'revoke', id])).toMatchObject({
      code: 0,
      stdout: `API key ${id} was already revoked on 2026-03-03T10:30Z; requests with it get 401.\n`,
    });
    expect((await db.prisma.apiKey.findUniqueOrThrow({ where: { id } })).revokedAt).toEqual(revokedAt);
  });

  it('says what is wrong with a scope', async () => {
    const none = await slotfeed(['api-keys', 'create', '--label', 'x']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('give at least one --connection <id> or --team <team>');
    const missing = await slotfeed(['api-keys', 'create', '--label', 'x', '--connection', randomUUID()]);
    expect(missing.stderr).toContain('does not exist');
    expect((await slotfeed(['api-keys', 'create', '--label', 'x', '--connection', 'nope'])).code).toBe(2);
  });
});

describe('slotfeed webhooks', () => {
  it('creates an endpoint (secret once, sealed), lists it, shows deliveries and deletes it', async () => {
    const made = await slotfeed(
      [
        'webhooks',
        'create',
        '--connection',
        ada,
        '--url',
        'https://hooks.example.com/x',
        '--event',
        'booking.inferred',
      ],
      { TOKEN_ENCRYPTION_KEY: KEY },
    );
    expect(made).toMatchObject({ code: 0 });
    const secret = /whsec_\S+/.exec(made.stdout)![0];
    const row = await db.prisma.webhookEndpoint.findFirstOrThrow({ where: { connectionId: ada } });
    expect(row.secretSealed).not.toContain(secret.slice(6));
    expect(row.events).toEqual(['booking.inferred']);
    const listed = await slotfeed(['webhooks', 'list']);
    expect(listed.stdout).toContain('https://hooks.example.com/x');
    expect(listed.stdout).not.toContain(secret);
    expect((await slotfeed(['webhooks', 'deliveries', row.id])).stdout).toContain('No deliveries');
    expect((await slotfeed(['webhooks', 'delete', row.id])).stdout).toContain('deleted');
  });

  it('prints the endpoint and its secret as JSON with --format json, for a script to hand to its receiver', async () => {
    const made = await slotfeed(
      [
        'webhooks',
        'create',
        '--connection',
        ada,
        '--url',
        'https://hooks.example.com/json',
        '--format',
        'json',
      ],
      { TOKEN_ENCRYPTION_KEY: KEY },
    );
    expect(made.code).toBe(0);
    const printed = JSON.parse(made.stdout) as { endpoint: { id: string; url: string }; secret: string };
    expect(printed.secret).toMatch(/^whsec_\S+$/);
    expect(printed.endpoint.url).toBe('https://hooks.example.com/json');
    const row = await db.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: printed.endpoint.id } });
    expect(row.secretSealed).not.toContain(printed.secret.slice(6));
    await slotfeed(['webhooks', 'delete', row.id]);
  });

  it('needs the encryption key to make one, and refuses private targets and unknown events', async () => {
    const noKey = await slotfeed([
      'webhooks',
      'create',
      '--connection',
      ada,
      '--url',
      'https://hooks.example.com/y',
    ]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('TOKEN_ENCRYPTION_KEY');
    const withKey = { TOKEN_ENCRYPTION_KEY: KEY };
    const loopback = await slotfeed(
      ['webhooks', 'create', '--connection', ada, '--url', 'http://localhost:9/y'],
      withKey,
    );
    expect(loopback.code).toBe(1);
    expect(loopback.stderr).toContain('private, loopback and link-local addresses are refused');
    const allowed = await slotfeed(
      ['webhooks', 'create', '--connection', ada, '--url', 'http://localhost:9/y'],
      {
        ...withKey,
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      },
    );
    expect(allowed.code).toBe(0);
    const unknown = await slotfeed(
      [
        'webhooks',
        'create',
        '--connection',
        ada,
        '--url',
        'https://hooks.example.com/z',
        '--event',
        'everything',
      ],
      withKey,
    );
    expect(unknown.stderr).toContain('no event "everything"');
    const both = await slotfeed(['webhooks', 'create', '--url', 'https://hooks.example.com/z'], withKey);
    expect(both.stderr).toContain('exactly one of --connection and --team');
  });
});
