// OAuth tokens at rest: AES-256-GCM with a fresh 96-bit IV per encryption and the connection id as associated
// data, so a sealed token copied onto another connection's row fails to open instead of authenticating as
// the wrong account. Each envelope names its key id, so keys can be rotated: new tokens are sealed with the
// current key while older keys stay configured for opening only.
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class TokenVaultError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenVaultError';
  }
}

export interface VaultKey {
  id: string;
  key: Buffer;
}

/** A key's id is a fingerprint of the key itself: operators rotate by swapping values, not by naming keys. */
export function vaultKeyFromBase64(encoded: string): VaultKey {
  const key = Buffer.from(encoded, 'base64');
  if (key.length !== 32) throw new TokenVaultError('an encryption key must be 32 bytes, base64-encoded');
  return { id: createHash('sha256').update(key).digest('hex').slice(0, 12), key };
}

export interface TokenVault {
  readonly currentKeyId: string;
  seal(plaintext: string, connectionId: string): string;
  open(sealed: string, connectionId: string): string;
  /** True when the envelope was sealed with a key other than the current one (re-seal it on next write). */
  needsReseal(sealed: string): boolean;
  /**
   * A proof that slotfeed made `text` for `purpose`: an HMAC under a key derived from the current key. Public
   * (it may be written where others read it); only a holder of the key can make one.
   */
  prove(purpose: string, text: string): string;
  /** Whether `proof` is one `prove(purpose, text)` made under the current key or an older configured one. */
  proves(purpose: string, text: string, proof: string): boolean;
}

const PROOF_BYTES = 16;

/** A key of its own for each purpose, so a proof is never also a valid MAC of anything else. */
function proofOf(key: Buffer, purpose: string, text: string): Buffer {
  const derived = createHmac('sha256', key).update(`slotfeed proof key: ${purpose}`).digest();
  return createHmac('sha256', derived).update(text, 'utf8').digest().subarray(0, PROOF_BYTES);
}

export function createTokenVault(current: VaultKey, decryptOnly: VaultKey[] = []): TokenVault {
  const keys = new Map([...decryptOnly, current].map((k) => [k.id, k.key]));

  return {
    currentKeyId: current.id,

    seal(plaintext, connectionId) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current.key, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(connectionId, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const parts = [iv, cipher.getAuthTag(), ciphertext].map((b) => b.toString('base64url'));
      return [VERSION, current.id, ...parts].join('.');
    },

    open(sealed, connectionId) {
      const [version, keyId, iv, tag, ciphertext, ...rest] = sealed.split('.');
      if (version !== VERSION || !keyId || !iv || !tag || ciphertext === undefined || rest.length > 0) {
        throw new TokenVaultError('sealed token is malformed');
      }
      const key = keys.get(keyId);
      if (!key) throw new TokenVaultError(`sealed token uses key ${keyId}, which is not configured`);
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), {
          authTagLength: TAG_BYTES,
        });
        decipher.setAAD(Buffer.from(connectionId, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([
          decipher.update(Buffer.from(ciphertext, 'base64url')),
          decipher.final(),
        ]).toString('utf8');
      } catch {
        // GCM's tag check failed: the ciphertext, its IV or tag, or the connection it is bound to was altered.
        throw new TokenVaultError(
          'sealed token failed authentication (tampered, or sealed for another connection)',
        );
      }
    },

    needsReseal(sealed) {
      return sealed.split('.')[1] !== current.id;
    },

    prove(purpose, text) {
      return proofOf(current.key, purpose, text).toString('base64url');
    },

    proves(purpose, text, proof) {
      const given = Buffer.from(proof, 'base64url');
      if (given.length !== PROOF_BYTES) return false;
      return [...keys.values()].some((key) => timingSafeEqual(proofOf(key, purpose, text), given));
    },
  };
}
