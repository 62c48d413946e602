import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCli } from '../../src/cli/program.js';
import { createFeedStore } from '../../src/store/feeds.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let db: TestDatabase;
let env: Record<string, string>;
const connectionId = randomUUID();

beforeAll(async () => {
  db = await createTestDatabase('feeds_cli');
  await db.prisma.connection.create({
    data: { id: connectionId, upstreamUserId: 'usr_cli', email: 'ada@example.test', displayName: 'Ada' },
  });
  env = { DATABASE_URL: db.url, LOG_LEVEL: 'silent', PUBLIC_BASE_URL: 'https://slotfeed.example' };
});
afterAll(async () => {
  await db.drop();
});

async function slotfeed(...args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, env, {
    stdout: { write: (t) => void (stdout += t), isTTY: false },
    stderr: { write: (t) => void (stderr += t) },
  });
  return { code, stdout, stderr };
}

const tokenIn = (text: string) => /https:\/\/slotfeed\.example\/feeds\/([A-Za-z0-9_-]+)\.ics/.exec(text)?.[1];

describe('slotfeed feeds', () => {
  it('creates, lists, rotates and revokes a feed, showing each URL once', async () => {
    const feeds = createFeedStore(db.prisma);
    const created = await slotfeed(
      'feeds',
      'create',
      connectionId,
      '--view',
      'slots',
      '--days',
      '14',
      '--merge',
    );
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('webcal://slotfeed.example/feeds/');
    const token = tokenIn(created.stdout)!;
    const feed = await feeds.findByToken(token);
    expect(feed?.options).toEqual({ view: 'slots', days: 14, merge: true });

    const listed = await slotfeed('feeds', 'list');
    expect(listed.stdout).toContain(feed!.id);
    expect(listed.stdout).toContain('slots, all event types, 14 days, merged');
    expect(listed.stdout).not.toContain(token);

    const rotated = await slotfeed('feeds', 'rotate', feed!.id);
    const newToken = tokenIn(rotated.stdout)!;
    expect(newToken).not.toBe(token);
    expect(await feeds.findByToken(token)).toBeUndefined();
    expect((await feeds.findByToken(newToken))?.id).toBe(feed!.id);

    expect((await slotfeed('feeds', 'revoke', feed!.id)).code).toBe(0);
    expect(await feeds.findByToken(newToken)).toBeUndefined();
    expect((await slotfeed('feeds', 'list')).stdout).toBe('No feeds.\n');
  });

  it('creates free-time feeds by default, and refuses options of the other view', async () => {
    const feeds = createFeedStore(db.prisma);
    const created = await slotfeed('feeds', 'create', connectionId, '--summary', 'Available');
    expect(created.code).toBe(0);
    expect((await feeds.findByToken(tokenIn(created.stdout)!))?.options).toEqual({
      view: 'free',
      summary: 'Available',
    });
    expect(created.stdout).toContain('free time, all event types, "Available"');

    const merged = await slotfeed('feeds', 'create', connectionId, '--merge');
    expect(merged.code).toBe(1);
    expect(merged.stderr).toMatch(/merge applies to the slots view only/);
    const badView = await slotfeed('feeds', 'create', connectionId, '--view', 'busy');
    expect(badView.code).toBe(2);
    expect(badView.stderr).toMatch(/--view/);
  });

  it('refuses a malformed id with exit code 2 and an unknown one with exit code 1', async () => {
    const malformed = await slotfeed('feeds', 'rotate', 'nope');
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/not a feed id: "nope"/);
    const unknown = await slotfeed('feeds', 'create', randomUUID());
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no connection with id/);
  });
});
