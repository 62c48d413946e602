import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { createTokenVault, TokenVaultError, vaultKeyFromBase64 } from '../../src/store/token-vault.js';

const oldKey = vaultKeyFromBase64(randomBytes(32).toString('base64'));
const newKey = vaultKeyFromBase64(randomBytes(32).toString('base64'));
const connectionId = '5b0f9f5e-7f4e-4a8a-9a51-0c6f3e7d2a10';
const token = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c3JfMSJ9.signature';

describe('token vault', () => {
  it('round-trips a token and never stores it in the clear', () => {
    const vault = createTokenVault(newKey);
    const sealed = vault.seal(token, connectionId);
    expect(sealed).not.toContain(token);
    expect(sealed).not.toContain(Buffer.from(token).toString('base64url').slice(0, 20));
    expect(vault.open(sealed, connectionId)).toBe(token);
  });

  it('uses a fresh IV every time', () => {
    const vault = createTokenVault(newKey);
    expect(vault.seal(token, connectionId)).not.toBe(vault.seal(token, connectionId));
  });

  it('fails loudly on tampered ciphertext, tag or IV', () => {
    const vault = createTokenVault(newKey);
    const parts = vault.seal(token, connectionId).split('.');
    for (const index of [2, 3, 4]) {
      const altered = [...parts];
      const bytes = Buffer.from(altered[index] as string, 'base64url');
      bytes[0] = (bytes[0] as number) ^ 0x01;
      altered[index] = bytes.toString('base64url');
      expect(() => vault.open(altered.join('.'), connectionId)).toThrow(TokenVaultError);
    }
    expect(() => vault.open('v1.garbage', connectionId)).toThrow(/malformed/);
  });

  it('binds a sealed token to its connection', () => {
    const vault = createTokenVault(newKey);
    const sealed = vault.seal(token, connectionId);
    expect(() => vault.open(sealed, 'another-connection')).toThrow(/another connection/);
  });

  it('opens tokens sealed with a rotated-out key and says they need re-sealing', () => {
    const sealedWithOld = createTokenVault(oldKey).seal(token, connectionId);
    const rotated = createTokenVault(newKey, [oldKey]);
    expect(rotated.open(sealedWithOld, connectionId)).toBe(token);
    expect(rotated.needsReseal(sealedWithOld)).toBe(true);
    expect(rotated.needsReseal(rotated.seal(token, connectionId))).toBe(false);
    expect(() => createTokenVault(newKey).open(sealedWithOld, connectionId)).toThrow(/not configured/);
  });

  it('rejects keys of the wrong size', () => {
    expect(() => vaultKeyFromBase64(randomBytes(16).toString('base64'))).toThrow(/32 bytes/);
  });
});
