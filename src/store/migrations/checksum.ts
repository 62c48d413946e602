// Checksums as Prisma computes and compares them (prisma-engines, schema-connector/src/checksum.rs), so a row
// either tool wrote verifies in the other: SHA-256 of the script's UTF-8 text, as 64 lowercase hex digits.
import { createHash } from 'node:crypto';

const CHECKSUM_LENGTH = 64;

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The checksum recorded in `_prisma_migrations.checksum` for this script. */
export function migrationChecksum(script: string): string {
  return sha256(script).toString('hex');
}

/**
 * Whether `script` is the one recorded with `checksum`. Line endings do not count (git may check a file out
 * with CRLF on one machine and LF on another), and checksums written by old Prisma versions without zero
 * padding of each byte (prisma-engines#1887) still match.
 */
export function scriptMatchesChecksum(script: string, checksum: string): boolean {
  const variants = [script, script.replaceAll('\r\n', '\n'), script.replaceAll('\n', '\r\n')];
  return variants.some((variant) => {
    const digest = sha256(variant);
    const rendered =
      checksum.length !== 0 && checksum.length !== CHECKSUM_LENGTH
        ? [...digest].map((byte) => byte.toString(16)).join('')
        : digest.toString('hex');
    return rendered === checksum;
  });
}
