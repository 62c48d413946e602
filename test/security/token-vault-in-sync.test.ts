// The vault's three failure modes as a running sync meets them (test/store/token-vault.test.ts covers the
// vault alone): a rotated key (old key configured for decryption) keeps every connection working and the
// next refresh re-seals under the new key; a wrong key and a tampered envelope stop the sync for good with a
// token_vault failure that names no secret, change nothing stored, and spend no refresh token.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { composeServices } from '../../src/composition/services.js';
import { createStores } from '../../src/composition/stores.js';
import { vaultKeyFromBase64 } from '../../src/store/token-vault.js';
import { syncConnection, SyncFailedError } from '../../src/sync/sync-connection.js';
import { createSyncHarness, type FakeClock, type SyncHarness } from '../support/sync-harness.js';

let h: SyncHarness;
const issued: string[] = [];

beforeAll(async () => {
  h = await createSyncHarness('sec_vault', {
    simulator: {
      rotateRefreshTokens: true,
      accessTokenTtlSeconds: 900,
      onCredentialIssued: (c) => issued.push(c.value),
    },
  });
});
afterAll(async () => {
  await h?.close();
});

/** A sync through stores and services whose vault has the given keys. */
async function syncWithKeys(connectionId: string, currentKey: string, previousKeys: string[] = []) {
  const config = { ...h.config, vault: { currentKey, previousKeys } };
  const services = composeServices(config, h.clients, createStores(config, h.clients), h.clock);
  return syncConnection(services.syncDeps, { connectionId, jobId: null, attempt: 1, maxAttempts: 1 });
}

const row = (id: string) => h.db.prisma.connection.findUniqueOrThrow({ where: { id } });
const keyIdOf = (sealed: string | null) => sealed?.split('.')[1];
const tokenCalls = () => h.sim.control.callCounts()['POST /oauth2/token'] ?? 0;

async function expectVaultFailure(connectionId: string, run: () => Promise<unknown>, reason: RegExp) {
  const before = await row(connectionId);
  const callsBefore = tokenCalls();
  const thrown = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(thrown).toBeInstanceOf(SyncFailedError);
  expect((thrown as SyncFailedError).verdict).toMatchObject({ code: 'token_vault', permanent: true });
  expect((thrown as SyncFailedError).verdict.message).toMatch(reason);
  const after = await row(connectionId);
  // Nothing rewritten, no refresh token spent, the last good snapshot kept.
  expect(after.accessTokenSealed).toBe(before.accessTokenSealed);
  expect(after.refreshTokenSealed).toBe(before.refreshTokenSealed);
  expect(after.lastGoodSyncAt).toEqual(before.lastGoodSyncAt);
  expect(tokenCalls()).toBe(callsBefore);
  const lastRun = await h.db.prisma.syncRun.findFirstOrThrow({
    where: { connectionId },
    orderBy: { startedAt: 'desc' },
  });
  // Every column, its writer's transaction id (a bigint) as text.
  const stored = JSON.stringify(lastRun, (_key, value: unknown) =>
    typeof value === 'bigint' ? value.toString() : value,
  );
  for (const secret of issued) expect(stored.includes(secret)).toBe(false);
}

describe('a rotated key, the old one configured for decryption', () => {
  it('opens the old envelopes, and the next refresh re-seals them under the new key', async () => {
    const id = await h.connect(h.sim.users[0]!.email);
    const oldKey = h.config.vault.currentKey;
    const newKey = randomBytes(32).toString('base64');
    const oldId = vaultKeyFromBase64(oldKey).id;
    const newId = vaultKeyFromBase64(newKey).id;
    expect(keyIdOf((await row(id)).accessTokenSealed)).toBe(oldId);

    await syncWithKeys(id, newKey, [oldKey]);
    // No refresh was due: the envelopes stay as they were until the next write.
    expect(keyIdOf((await row(id)).refreshTokenSealed)).toBe(oldId);

    (h.clock as FakeClock).advance(900);
    await syncWithKeys(id, newKey, [oldKey]);
    const resealed = await row(id);
    expect(keyIdOf(resealed.accessTokenSealed)).toBe(newId);
    expect(keyIdOf(resealed.refreshTokenSealed)).toBe(newId);
    // And the old key can now be dropped.
    await syncWithKeys(id, newKey);
    expect((await row(id)).lastSyncOutcome).toBe('succeeded');
  });
});

describe('a wrong key', () => {
  it('fails the sync for good, naming the key id only, and changes nothing', async () => {
    const id = await h.connect(h.sim.users[1]!.email);
    await syncWithKeys(id, h.config.vault.currentKey);
    await expectVaultFailure(
      id,
      () => syncWithKeys(id, randomBytes(32).toString('base64')),
      /not configured/,
    );
  });
});

describe('a tampered envelope', () => {
  it('fails authentication: flipped ciphertext, or an envelope moved from another connection', async () => {
    const id = await h.connect(h.sim.users[2]!.email);
    await syncWithKeys(id, h.config.vault.currentKey);
    const original = (await row(id)).accessTokenSealed!;
    const parts = original.split('.');
    const ciphertext = Buffer.from(parts[4]!, 'base64url');
    ciphertext[0] = ciphertext[0]! ^ 0x01;
    const flipped = [...parts.slice(0, 4), ciphertext.toString('base64url')].join('.');
    await h.db.prisma.connection.update({ where: { id }, data: { accessTokenSealed: flipped } });
    await expectVaultFailure(id, () => syncWithKeys(id, h.config.vault.currentKey), /failed authentication/);

    // The wrong-key test's connection: sealed under the same (current) key, for another connection id.
    const other = await h.db.prisma.connection.findFirstOrThrow({ where: { email: h.sim.users[1]!.email } });
    await h.db.prisma.connection.update({
      where: { id },
      data: { accessTokenSealed: other.accessTokenSealed, refreshTokenSealed: other.refreshTokenSealed },
    });
    await expectVaultFailure(id, () => syncWithKeys(id, h.config.vault.currentKey), /another connection/);
  });
});
