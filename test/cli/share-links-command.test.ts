// `slotfeed share-links …` (issue 37): a link is made for a feed with a label and an expiry and its address
// printed; the list never shows an address; revoking is idempotent; bad expiries and origins are refused with
// the reason and exit 2 (a usage error) or 1.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCapturedCli } from '../support/cli-run.js';
import { NOT_ORIGINS } from '../support/not-origins.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let db: TestDatabase;
let env: Record<string, string>;
const ada = randomUUID();
const KEY = randomBytes(32).toString('base64');
let feedId: string;

beforeAll(async () => {
  db = await createTestDatabase('share_links_cli');
  await db.prisma.connection.create({
    data: {
      id: ada,
      upstreamUserId: 'usr_ada',
      email: 'ada@example.test',
      displayName: 'Ada',
      timezone: 'Asia/Kolkata',
    },
  });
  env = { DATABASE_URL: db.url, LOG_LEVEL: 'silent', PUBLIC_BASE_URL: 'https://slots.example.com' };
  feedId = (
    await db.prisma.feed.create({
      data: { connectionId: ada, tokenHash: new Uint8Array(randomBytes(32)) },
    })
  ).id;
});
afterAll(async () => {
  await db.drop();
});

const slotfeed = (args: string[], extra: Record<string, string> = {}) =>
  runCapturedCli({ ...env, ...extra }, args);

describe('slotfeed share-links', () => {
  it('makes a link with an expiry date (the end of that day in the account’s zone) and prints its address', async () => {
    const made = await slotfeed(
      ['share-links', 'create', '--feed', feedId, '--label', 'Acme', '--expires', '2099-12-31'],
      { TOKEN_ENCRYPTION_KEY: KEY },
    );
    expect(made).toMatchObject({ code: 0 });
    expect(made.stdout).toContain('expires 2099-12-31T18:30Z');
    const address = /https:\/\/slots\.example\.com\/share\/([\w-]{43})/.exec(made.stdout);
    expect(address).not.toBeNull();
    const listed = await slotfeed(['share-links', 'list', '--format', 'json']);
    expect(listed.stdout).not.toContain(address![1]);
    const [link] = JSON.parse(listed.stdout).shareLinks;
    expect(link).toMatchObject({ label: 'Acme', feedId, secretRecoverable: true, revokedAt: null });
    expect((await slotfeed(['share-links', 'revoke', link.id])).stdout).toContain('revoked');
    expect((await slotfeed(['share-links', 'revoke', link.id])).stdout).toContain('already revoked');
    expect((await slotfeed(['share-links', 'list', '--active'])).stdout).toContain('No share links');
  });

  it('takes a number of days and origins that may embed it; refuses what is not an origin', async () => {
    const made = await slotfeed([
      'share-links',
      'create',
      '--feed',
      feedId,
      '--label',
      'blog',
      '--expires',
      '7d',
      '--embed-origin',
      'https://blog.example.com',
    ]);
    expect(made).toMatchObject({ code: 0 });
    const listed = JSON.parse((await slotfeed(['share-links', 'list', '--format', 'json'])).stdout);
    expect(listed.shareLinks.find((l: { label: string }) => l.label === 'blog')).toMatchObject({
      frameAncestors: ['https://blog.example.com'],
      secretRecoverable: false,
    });
    const bad = await slotfeed([
      'share-links',
      'create',
      '--feed',
      feedId,
      '--label',
      'x',
      '--embed-origin',
      'https://blog.example.com/page',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('is not an origin');
    const past = await slotfeed([
      'share-links',
      'create',
      '--feed',
      feedId,
      '--label',
      'x',
      '--expires',
      '2001-01-01',
    ]);
    expect(past.code).toBe(1);
    expect(past.stderr).toContain('has passed already');
  });

  it('lists only links whose page opens with --active: not one of a revoked feed, nor an expired one', async () => {
    const revokedFeed = (
      await db.prisma.feed.create({ data: { connectionId: ada, tokenHash: new Uint8Array(randomBytes(32)) } })
    ).id;
    const made = async (feed: string, label: string, expires = 'never') =>
      slotfeed(['share-links', 'create', '--feed', feed, '--label', label, '--expires', expires]);
    expect(await made(revokedFeed, 'of a feed revoked since')).toMatchObject({ code: 0 });
    expect(await made(feedId, 'lasting', '2099-01-01')).toMatchObject({ code: 0 });
    expect(await made(feedId, 'soon over', '1d')).toMatchObject({ code: 0 });
    await db.prisma.feed.update({ where: { id: revokedFeed }, data: { revokedAt: new Date() } });
    await db.prisma.shareLink.updateMany({
      where: { label: 'soon over' },
      data: { expiresAt: new Date(Date.now() - 60_000) },
    });
    const active = await slotfeed(['share-links', 'list', '--active']);
    expect(active.stdout).toContain('lasting');
    expect(active.stdout).not.toContain('of a feed revoked since');
    expect(active.stdout).not.toContain('soon over');
    const all = await slotfeed(['share-links', 'list']);
    const row = all.stdout.split('\n').find((line) => line.includes('of a feed revoked since'));
    expect(row).toMatch(/feed revoked \d{4}-\d\d-\d\dT\d\d:\d\dZ/);
    const json = JSON.parse(
      (await slotfeed(['share-links', 'list', '--active', '--format', 'json'])).stdout,
    ) as {
      shareLinks: { label: string }[];
    };
    expect(json.shareLinks.map((l) => l.label)).toContain('lasting');
    expect(json.shareLinks.map((l) => l.label)).not.toContain('of a feed revoked since');
  });

  it('tells an account whose zone this server does not know that a date cannot be read in it', async () => {
    const zoneless = randomUUID();
    await db.prisma.connection.create({
      data: { id: zoneless, upstreamUserId: 'usr_mars', timezone: 'Mars/Olympus_Mons' },
    });
    const feed = (
      await db.prisma.feed.create({
        data: { connectionId: zoneless, tokenHash: new Uint8Array(randomBytes(32)) },
      })
    ).id;
    const dated = await slotfeed([
      'share-links',
      'create',
      '--feed',
      feed,
      '--label',
      'x',
      '--expires',
      '2099-12-31',
    ]);
    expect(dated.code).toBe(1);
    expect(dated.stderr).toContain('"Mars/Olympus_Mons"');
    expect(dated.stderr).not.toContain('is not a date');
    const days = await slotfeed(['share-links', 'create', '--feed', feed, '--label', 'x', '--expires', '7d']);
    expect(days.code).toBe(0);
  });

  it('refuses an embed origin whose host is no host name as a usage error naming it, and makes no link', async () => {
    const before = await db.prisma.shareLink.count();
    for (const value of NOT_ORIGINS) {
      const bad = await slotfeed([
        'share-links',
        'create',
        '--feed',
        feedId,
        '--label',
        'x',
        '--embed-origin',
        value,
      ]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain(`"${value}" is not an origin`);
    }
    expect(await db.prisma.shareLink.count()).toBe(before);
  });
});
