import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { runCli } from '../../src/cli/program.js';
import { createFeedStore } from '../../src/store/feeds.js';
import { runCapturedCli } from '../support/cli-run.js';
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

const slotfeed = (...args: string[]) => runCapturedCli(env, args);

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

  it('says the URL is shown again on /me only when the vault keeps it (TOKEN_ENCRYPTION_KEY given)', async () => {
    const feeds = createFeedStore(db.prisma);
    const unsealed = await slotfeed('feeds', 'create', connectionId);
    expect(unsealed.stdout).toContain('the URL is shown only now; keep it secret:');
    const key = randomBytes(32).toString('base64');
    const sealed = await runCapturedCli({ ...env, TOKEN_ENCRYPTION_KEY: key }, [
      'feeds',
      'create',
      connectionId,
    ]);
    expect(sealed.code).toBe(0);
    expect(sealed.stdout).toContain(
      'keep it secret (its owner’s page, /me, shows it again while the daemon has this TOKEN_ENCRYPTION_KEY):',
    );
    expect(sealed.stdout).not.toContain('shown only now');
    // What /me shows it from: the sealed copy of the token.
    const feed = await feeds.findByToken(tokenIn(sealed.stdout)!);
    const unsealedFeed = await feeds.findByToken(tokenIn(unsealed.stdout)!);
    const sealedOf = async (id: string) =>
      (await db.prisma.feed.findUniqueOrThrow({ where: { id }, select: { tokenSealed: true } })).tokenSealed;
    expect(await sealedOf(feed!.id)).toEqual(expect.any(String));
    expect(await sealedOf(unsealedFeed!.id)).toBeNull();
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
    expect(merged.code).toBe(2);
    expect(merged.stderr).toMatch(
      /--merge cannot be used with --view free: merge applies to the slots view only/,
    );
    const badView = await slotfeed('feeds', 'create', connectionId, '--view', 'tentative');
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

describe('slotfeed feeds create --event', () => {
  it('refuses an event type the connection does not have, listing the ones it has', async () => {
    const eventType = (
      upstreamEventId: string,
      title: string,
      extra: { enabled?: boolean; secret?: boolean },
    ) =>
      db.prisma.eventType.create({
        data: {
          connectionId,
          upstreamEventId,
          title,
          durationMinutes: 30,
          enabled: extra.enabled ?? true,
          secret: extra.secret ?? false,
          contentHash: upstreamEventId,
          payload: {},
        },
      });
    const lonely = randomUUID();
    await db.prisma.connection.create({ data: { id: lonely, upstreamUserId: 'usr_cli_lonely' } });
    const none = await slotfeed('feeds', 'create', lonely, '--event', 'evt_intro');
    expect(none.code).toBe(1);
    expect(none.stderr).toBe(
      `slotfeed: connection ${lonely} has no event types yet: they arrive with its first sync ` +
        `(\`slotfeed sync ${lonely} --wait\`).\n`,
    );

    await eventType('evt_intro', 'Intro call', {});
    await eventType('evt_private_1on1', 'Private', { secret: true });
    await eventType('evt_old', 'Workshop', { enabled: false });
    const unknown = await slotfeed('feeds', 'create', connectionId, '--event', 'evt_nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(
      `slotfeed: connection ${connectionId} has no event type "evt_nope". Its event types:\n` +
        '  evt_intro         Intro call\n' +
        '  evt_private_1on1  Private (secret)\n' +
        '  evt_old           Workshop (disabled)\n',
    );
    expect(await db.prisma.feed.count({ where: { upstreamEventId: 'evt_nope' } })).toBe(0);

    const secret = await slotfeed('feeds', 'create', connectionId, '--event', 'evt_private_1on1');
    expect(secret.code).toBe(0);
    expect(secret.stdout).toContain('free time, event evt_private_1on1');
  });
});

describe('list output', () => {
  const tty = (columns: number) => ({
    stdout: { write: (t: string) => void (captured += t), isTTY: true, columns },
    stderr: { write: () => undefined },
  });
  let captured = '';

  it('feeds list --format json gives every field, ids whole', async () => {
    const listed = await slotfeed('feeds', 'list', '--format', 'json');
    expect(listed.code).toBe(0);
    const { feeds } = JSON.parse(listed.stdout) as { feeds: { id: string; connectionId: string }[] };
    const stored = await db.prisma.feed.findMany({ where: { revokedAt: null }, select: { id: true } });
    expect(feeds.map((f) => f.id).sort()).toEqual(stored.map((f) => f.id).sort());
    expect(feeds[0]).toEqual(
      expect.objectContaining({ connectionId, options: expect.any(Object), revokedAt: null }),
    );
  });

  it('never cuts an id to fit a terminal: other columns shrink first', async () => {
    await db.prisma.connection.update({
      where: { id: connectionId },
      data: {
        email: 'ada.lovelace-byron@analytical-engine.example.test',
        lastSyncOutcome: 'succeeded',
        lastSyncAt: new Date(),
      },
    });
    captured = '';
    expect(await runCli(['connections', 'list'], env, tty(80))).toBe(0);
    const lines = captured.trimEnd().split('\n');
    expect(lines.find((line) => line.startsWith(`${connectionId}  `))).toBeDefined();
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(captured).toContain('…');

    captured = '';
    expect(await runCli(['feeds', 'list'], env, tty(80))).toBe(0);
    const feeds = await db.prisma.feed.findMany({ where: { revokedAt: null }, select: { id: true } });
    for (const { id } of feeds) expect(captured).toContain(`${id}  ${connectionId}  `);
  });
});

describe('slotfeed feeds revoke, a second time', () => {
  it('says when the feed was revoked, keeps that time and exits 0: for a connection’s feed and a team’s', async () => {
    await slotfeed('teams', 'create', 'Revokers', connectionId);
    const own = await slotfeed('feeds', 'create', connectionId);
    const team = await slotfeed('teams', 'feed', 'Revokers');
    for (const made of [own, team]) {
      const feed = /Feed (\S+)/.exec(made.stdout)![1]!;
      const first = await slotfeed('feeds', 'revoke', feed);
      expect(first).toMatchObject({ code: 0, stdout: `Feed ${feed} revoked; its URL now answers 404.\n` });
      const revokedAt = new Date('2026-03-03T10:30:00Z');
      await db.prisma.feed.update({ where: { id: feed }, data: { revokedAt } });

      const second = await slotfeed('feeds', 'revoke', feed);
      expect(second).toMatchObject({
        code: 0,
        stdout: `Feed ${feed} was already revoked on 2026-03-03T10:30Z; its URL answers 404.\n`,
      });
      expect((await db.prisma.feed.findUniqueOrThrow({ where: { id: feed } })).revokedAt).toEqual(revokedAt);
    }
  });
});
