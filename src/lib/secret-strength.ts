// How guessable a configured secret looks. A secret typed by a person ("admin-admin-admin…", a keyboard walk, a
// counting run) has far less entropy than its length suggests; a generated one (`openssl rand -base64 32`) has
// about as much as its length times its alphabet. This cannot measure true entropy (nothing can, from one
// sample); it refuses the shapes that people pick and random generators practically never produce.

/** Bits estimated from the spread of the characters: length × Shannon entropy of their frequencies. */
export function estimatedBits(secret: string): number {
  const chars = [...secret];
  const counts = new Map<string, number>();
  for (const ch of chars) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let perChar = 0;
  for (const count of counts.values()) {
    const p = count / chars.length;
    perChar -= p * Math.log2(p);
  }
  return perChar * chars.length;
}

/** Share of its three-character runs that occur more than once ("passwordpassword…", "abcabc…"). */
function repeatedShare(chars: string[]): number {
  const seen = new Set<string>();
  let repeats = 0;
  for (let i = 0; i + 3 <= chars.length; i++) {
    const run = chars.slice(i, i + 3).join('');
    if (seen.has(run)) repeats++;
    seen.add(run);
  }
  return chars.length < 3 ? 1 : repeats / (chars.length - 2);
}

/** Share of neighbouring characters that repeat or step by one ("aaaa", "abcd", "9876"). */
function steppingShare(chars: string[]): number {
  let steps = 0;
  for (let i = 1; i < chars.length; i++) {
    const delta = Math.abs((chars[i]?.codePointAt(0) ?? 0) - (chars[i - 1]?.codePointAt(0) ?? 0));
    if (delta <= 1) steps++;
  }
  return chars.length < 2 ? 1 : steps / (chars.length - 1);
}

export interface StrengthRule {
  minLength: number;
  /** Estimated bits (see estimatedBits) a secret must reach. */
  minBits: number;
}

/** Why the secret is weak, phrased to follow the variable's name; undefined when it passes. */
export function weaknessOf(secret: string, rule: StrengthRule): string | undefined {
  const chars = [...secret];
  if (chars.length < rule.minLength) {
    return `is too short: it has ${chars.length} characters and needs at least ${rule.minLength}`;
  }
  // Thresholds far from what generators make: 32 random hex characters repeat a three-character run ~0.4 % of
  // the time and step between neighbours ~18 % (base64: ~5 %), so a quarter repeated or 60 % stepping is
  // ~6 standard deviations out for them (at half, one `openssl rand -hex 16` in ~70,000 was refused).
  if (repeatedShare(chars) > 0.25 || steppingShare(chars) > 0.6 || estimatedBits(secret) < rule.minBits) {
    return 'is too easy to guess: it repeats, counts or draws on too few different characters';
  }
  return undefined;
}
