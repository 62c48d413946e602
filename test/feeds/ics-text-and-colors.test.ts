import { describe, expect, it } from '@jest/globals';
import { cssColorNameFor } from '../../src/feeds/css-colors.js';
import { escapeText, foldLine, normalizeContentLines } from '../../src/feeds/ics-text.js';

const octets = (s: string) => Buffer.byteLength(s, 'utf8');

describe('foldLine', () => {
  it('leaves a line of 75 octets alone and folds one of 76', () => {
    expect(foldLine('X'.repeat(75))).toBe('X'.repeat(75));
    expect(foldLine('X'.repeat(76))).toBe(`${'X'.repeat(75)}\r\n X`);
  });

  it('folds by octets without splitting a UTF-8 character, continuation space included', () => {
    for (const unit of ['é', '☕', '🎉', 'a🎉é']) {
      const line = `SUMMARY:${unit.repeat(60)}`;
      const physical = foldLine(line).split('\r\n');
      expect(physical.length).toBeGreaterThan(1);
      for (const part of physical) expect(octets(part)).toBeLessThanOrEqual(75);
      expect(physical.slice(1).every((part) => part.startsWith(' '))).toBe(true);
      expect(physical.map((part, i) => (i === 0 ? part : part.slice(1))).join('')).toBe(line);
      // A split 4-byte character would leave a lone surrogate at a fold.
      expect(physical.some((part) => /[\uD800-\uDBFF]$|^ ?[\uDC00-\uDFFF]/.test(part))).toBe(false);
    }
  });

  it('fills lines up to the limit: a 2-octet character at octet 75 moves to the next line', () => {
    const physical = foldLine(`${'X'.repeat(74)}é`).split('\r\n');
    expect(physical).toEqual(['X'.repeat(74), ' é']);
  });
});

describe('normalizeContentLines', () => {
  it('refolds folded text and ends every line, the last one too, with CRLF', () => {
    expect(normalizeContentLines('A:1\r\nB:2\r\n 3\r\nC:4')).toBe('A:1\r\nB:23\r\nC:4\r\n');
  });
});

describe('escapeText', () => {
  it('escapes backslash, semicolon, comma and newlines, and drops control characters', () => {
    expect(escapeText('a\\b;c,d\r\ne\rf\u0001')).toBe('a\\\\b\\;c\\,d\\ne\\nf');
  });
});

describe('cssColorNameFor', () => {
  it('keeps CSS3 names, maps hex to the nearest name, and leaves out what it cannot map faithfully', () => {
    expect(cssColorNameFor('Teal')).toBe('teal');
    expect(cssColorNameFor('#ff0000')).toBe('red');
    expect(cssColorNameFor('#F00')).toBe('red');
    expect(cssColorNameFor('#33b679')).toBe('mediumseagreen');
    expect(cssColorNameFor('#616161')).toBe('dimgray');
    expect(cssColorNameFor('rebeccapurple')).toBeUndefined(); // CSS4, not CSS3
    expect(cssColorNameFor('#12345')).toBeUndefined();
    expect(cssColorNameFor('blurple')).toBeUndefined();
    expect(cssColorNameFor(null)).toBeUndefined();
  });

  it('leaves out colours far from every name', () => {
    // Very dark shades sit between black and the darkest named colours (maroon, darkgreen): ΔE76 > 25 to both.
    expect(cssColorNameFor('#330000')).toBeUndefined();
    expect(cssColorNameFor('#003300')).toBeUndefined();
    expect(cssColorNameFor('#000000')).toBe('black');
  });
});
