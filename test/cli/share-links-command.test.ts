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
