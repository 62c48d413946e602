// The keys that encrypt OAuth tokens at rest, the current one and those of earlier rotations.
import { z } from 'zod';
import { section, variable } from './variable.js';

const base64Key = z
  .string()
  .refine(
    (v) => Buffer.from(v, 'base64').length === 32,
    'must be 32 random bytes, base64-encoded (openssl rand -base64 32)',
  );

const base64KeyList = z
  .string()
  .transform((v) =>
    v
      .split(',')
      .map((k) => k.trim())
      .filter((k) => k.length > 0),
  )
  .refine(
    (keys) => keys.every((k) => Buffer.from(k, 'base64').length === 32),
    'each key must be 32 bytes, base64-encoded',
  );

export const vaultSection = section({
  variables: {
    currentKey: variable({
      name: 'TOKEN_ENCRYPTION_KEY',
      description:
        'Key that encrypts OAuth tokens at rest (AES-256-GCM): 32 random bytes, base64 (`openssl rand -base64 32`).',
      secret: true,
      schema: base64Key,
    }),
    previousKeys: variable({
      name: 'TOKEN_ENCRYPTION_KEYS_PREVIOUS',
      description: 'Comma-separated older keys, used only to decrypt tokens sealed before a key rotation.',
      default: '',
      secret: true,
      schema: base64KeyList,
    }),
  },
});
