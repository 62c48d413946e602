// The demo's own secrets, kept in `.slotfeed/demo.json` (git-ignored): the token encryption key must survive a
// restart, or the OAuth tokens stored in the demo's database could no longer be decrypted; the admin token
// stays the same so a browser that logged in once stays logged in; the Postgres password is the embedded
// cluster's, set when it was created; the CalDAV password is the demo's user's on the CalDAV server it starts
// (local-caldav.ts), which keeps its calendars in the data directory too. A file written before the CalDAV
// password existed still loads, and gets one.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

export interface DemoSecrets {
  tokenEncryptionKey: string;
  adminToken: string;
  postgresPassword: string;
  caldavPassword: string;
}

const storedSecrets = z.object({
  tokenEncryptionKey: z.string().refine((v) => Buffer.from(v, 'base64').length === 32),
  adminToken: z.string().min(16),
  postgresPassword: z.string().min(8),
  caldavPassword: z.string().min(8).optional(),
});

export function newDemoSecrets(): DemoSecrets {
  return {
    tokenEncryptionKey: randomBytes(32).toString('base64'),
    adminToken: randomBytes(24).toString('base64url'),
    postgresPassword: randomBytes(18).toString('hex'),
    caldavPassword: newCaldavPassword(),
  };
}

function newCaldavPassword(): string {
  return randomBytes(12).toString('hex');
}

/** Written aside and renamed, so an interrupted run never leaves half a file behind; owner-only. */
async function writeSecrets(file: string, secrets: DemoSecrets): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  await rename(partial, file);
}

/** The stored secrets, or new ones written with owner-only permissions; `created` says which. */
export async function loadOrCreateDemoSecrets(
  file: string,
): Promise<{ secrets: DemoSecrets; created: boolean }> {
  let text: string | undefined;
  try {
    text = await readFile(file, 'utf8');
  } catch (thrown: unknown) {
    if ((thrown as NodeJS.ErrnoException).code !== 'ENOENT') throw thrown;
  }
  if (text !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const checked = storedSecrets.safeParse(parsed);
    // Replacing a damaged file would silently orphan every token sealed with the old key.
    if (!checked.success) {
      throw new Error(
        `${file} is damaged. Delete the demo's data directory (${path.dirname(file)}) to start the demo afresh.`,
      );
    }
    const { caldavPassword, ...kept } = checked.data;
    if (caldavPassword !== undefined) return { secrets: { ...kept, caldavPassword }, created: false };
    // A file from before the demo started a CalDAV server: the same secrets, and one more.
    const upgraded = { ...kept, caldavPassword: newCaldavPassword() };
    await writeSecrets(file, upgraded);
    return { secrets: upgraded, created: false };
  }
  const secrets = newDemoSecrets();
  await writeSecrets(file, secrets);
  return { secrets, created: true };
}
