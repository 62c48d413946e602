// The byte-level rules of RFC 5545 that calendar apps are strict about, applied after ical-generator: every
// line ends in CRLF (the last one too, which the library leaves off), and lines are folded at 75 octets
// without splitting a UTF-8 character. Doing the folding here, over unfolded text, keeps the output exact
// whatever the library's own folding does in a later version.

const CRLF = '\r\n';
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
export const MAX_LINE_OCTETS = 75;

/**
 * Text from upstream made safe to carry in a TEXT value: well-formed Unicode (a lone surrogate would become
 * invalid UTF-8), one kind of newline, and no control characters, which RFC 5545 does not allow in values.
 */
export function sanitizeText(value: string): string {
  return (
    value
      .replace(LONE_SURROGATE, '\uFFFD')
      .replace(/\r\n?/g, '\n')
      // eslint-disable-next-line no-control-regex -- removing control characters is the point
      .replace(/[\u0000-\u0008\u000B-\u001F\u007F]/g, '')
  );
}

/** A TEXT value escaped as RFC 5545 §3.3.11 asks; for properties the library writes without escaping. */
export function escapeText(value: string): string {
  return sanitizeText(value)
    .replace(/[\\;,]/g, (c) => `\\${c}`)
    .replace(/\n/g, '\\n');
}

function octetsOf(char: string): number {
  const code = char.codePointAt(0) ?? 0;
  return code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
}

/** One content line folded: at most 75 octets per physical line, the continuation's leading space included. */
export function foldLine(line: string): string {
  if (Buffer.byteLength(line, 'utf8') <= MAX_LINE_OCTETS) return line;
  const parts: string[] = [];
  let current = '';
  let octets = 0;
  for (const char of line) {
    const size = octetsOf(char);
    if (octets + size > MAX_LINE_OCTETS) {
      parts.push(current);
      current = ' ';
      octets = 1;
    }
    current += char;
    octets += size;
  }
  parts.push(current);
  return parts.join(CRLF);
}

/** Unfolds whatever folding the text has, then folds every line by octets and ends each with CRLF. */
export function normalizeContentLines(text: string): string {
  const lines = text
    .replace(/\r?\n[ \t]/g, '')
    .split(/\r?\n/)
    .filter((line) => line.length > 0);
  return lines.map(foldLine).join(CRLF) + CRLF;
}
