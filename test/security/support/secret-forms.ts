// What "a secret appears in this text" means for the leak checks: the secret itself, its base64, base64url,
// hex and URL-encoded forms, and, for opaque base64url tokens, the hex of the bytes they encode (how Postgres
// prints a bytea that held the raw token). Findings name the secret's kind and index, never its value, so a
// failing test does not print a live credential.

export interface NamedSecret {
  /** e.g. 'refresh_token #3'. */
  name: string;
  value: string;
}

export interface Leak {
  secret: string;
  form: string;
  where: string;
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The encodings worth looking for, each with its name; hex forms are lower case (compare case-insensitively). */
export function encodedForms(secret: string): { form: string; text: string; caseless: boolean }[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms = [
    { form: 'plain', text: secret, caseless: false },
    { form: 'base64', text: bytes.toString('base64').replace(/=+$/, ''), caseless: false },
    { form: 'base64url', text: bytes.toString('base64url'), caseless: false },
    { form: 'hex', text: bytes.toString('hex'), caseless: true },
    { form: 'url-encoded', text: encodeURIComponent(secret), caseless: false },
  ];
  if (BASE64URL.test(secret) && secret.length >= 22) {
    const decoded = Buffer.from(secret, 'base64url');
    forms.push({ form: 'decoded-bytes-hex', text: decoded.toString('hex'), caseless: true });
    forms.push({
      form: 'decoded-bytes-base64',
      text: decoded.toString('base64').replace(/=+$/, ''),
      caseless: false,
    });
  }
  // A form identical to another (a URL-safe token is its own URL encoding) is checked once.
  const seen = new Set<string>();
  return forms.filter((f) => !seen.has(f.text) && seen.add(f.text));
}

/** Every (secret, form, place) where a secret shows up in one of the texts. */
export function findLeaks(texts: Map<string, string>, secrets: readonly NamedSecret[]): Leak[] {
  const lowered = new Map([...texts].map(([where, text]) => [where, text.toLowerCase()]));
  const leaks: Leak[] = [];
  for (const secret of secrets) {
    for (const { form, text, caseless } of encodedForms(secret.value)) {
      const needle = caseless ? text.toLowerCase() : text;
      for (const [where, haystack] of caseless ? lowered : texts) {
        if (haystack.includes(needle)) leaks.push({ secret: secret.name, form, where });
      }
    }
  }
  return leaks;
}
