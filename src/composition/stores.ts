// The stores over the shared clients.
import type { Config } from '../config.js';
import { createTokenVault, vaultKeyFromBase64, type TokenVault } from '../store/token-vault.js';

export function tokenVaultFor(vault: Config['vault']): TokenVault {
  return createTokenVault(vaultKeyFromBase64(vault.currentKey), vault.previousKeys.map(vaultKeyFromBase64));
}
