// The README is the first hour's page (what slotfeed is, the two commands, what they print, where to click) and
// links the rest, in docs/. Both stay inside the repository: every link leads to a file of this checkout and, with
// an #anchor, to a heading of that page; none leads outside (a standard is named, e.g. RFC 5545, not linked).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { anchorsOf, isOutside, linksOf, slugOf } from './markdown-links.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const README_MOST_LINES = 260;

const read = (page: string) => readFileSync(path.join(ROOT, page), 'utf8');
const PAGES = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** What is wrong with one link of a page, or null: a file outside the checkout or missing, an unknown anchor. */
function brokenLink(page: string, target: string): string | null {
  const [file = '', anchor] = decodeURI(target).split('#', 2);
  const resolved =
    file === '' ? path.join(ROOT, page) : path.resolve(path.dirname(path.join(ROOT, page)), file);
  const inRepo = path.relative(ROOT, resolved);
  if (file.startsWith('/') || inRepo.startsWith('..'))
    return 'not a path relative to the page inside the repository';
  if (!existsSync(resolved)) return `no file ${inRepo}`;
  if (anchor === undefined) return null;
  if (!resolved.endsWith('.md')) return `an anchor into ${inRepo}, which has no headings`;
  return anchorsOf(readFileSync(resolved, 'utf8')).has(anchor) ? null : `${inRepo} has no heading #${anchor}`;
}

describe('README.md and docs/', () => {
  it(`keep the README at most ${README_MOST_LINES} lines`, () => {
    expect(read('README.md').trimEnd().split('\n').length).toBeLessThanOrEqual(README_MOST_LINES);
  });

  it('link only to files of the repository that exist, and to headings those pages have', () => {
    const broken = PAGES.flatMap((page) =>
      linksOf(read(page))
        .filter((link) => !isOutside(link.target))
        .map((link) => ({ link, problem: brokenLink(page, link.target) }))
        .filter(({ problem }) => problem !== null)
        .map(({ link, problem }) => `${page}:${link.line} ${link.target}: ${problem}`),
    );
    expect(broken).toEqual([]);
  });

  it('never link outside the repository', () => {
    const outside = PAGES.flatMap((page) =>
      linksOf(read(page))
        .filter((link) => isOutside(link.target))
        .map((link) => `${page}:${link.line} ${link.target}`),
    );
    expect(outside).toEqual([]);
  });

  it('list every page of docs/ in the README', () => {
    const linked = new Set(linksOf(read('README.md')).map((link) => link.target.split('#')[0]));
    expect(PAGES.filter((page) => page !== 'README.md' && !linked.has(page))).toEqual([]);
  });
});

describe('the Markdown reader these checks rely on', () => {
  it('finds inline links, images, definitions, autolinks and bare URLs, with their lines', () => {
    const page = [
      'See [feeds](docs/feeds.md#team-feeds) and ![shot](screenshots/a.png "title").',
      '[ref]: docs/ref.md',
      '<https://example.com/a> and www.example.org and http://example.net/b.',
    ].join('\n');
    expect(linksOf(page)).toEqual([
      { line: 1, target: 'docs/feeds.md#team-feeds' },
      { line: 1, target: 'screenshots/a.png' },
      { line: 2, target: 'docs/ref.md' },
      { line: 3, target: 'https://example.com/a' },
      { line: 3, target: 'www.example.org' },
      { line: 3, target: 'http://example.net/b' },
    ]);
  });

  it('reads no link inside code, fenced or inline', () => {
    const page = [
      '`curl https://slotfeed.example/feeds/x.ics`',
      '```sh',
      '[a](b.md) https://x.test',
      '```',
    ].join('\n');
    expect(linksOf(page)).toEqual([]);
  });

  it('gives headings the anchors GitHub gives them', () => {
    expect(slugOf('Freshness: bands and budget')).toBe('freshness-bands-and-budget');
    expect(slugOf("Your page: what an account's owner can do")).toBe(
      'your-page-what-an-accounts-owner-can-do',
    );
    expect(slugOf('Free/busy')).toBe('freebusy');
    expect(slugOf('`slotfeed report` and the admin page')).toBe('slotfeed-report-and-the-admin-page');
    expect([...anchorsOf('# A\n## Notes\n```\n# not a heading\n```\n### Notes')]).toEqual([
      'a',
      'notes',
      'notes-1',
    ]);
    // An explicit anchor marks a point that is not a heading; one in a code block is no anchor.
    expect([...anchorsOf('- <a id="one-point"></a>**One point.**\n```\n<a id="code"></a>\n```')]).toEqual([
      'one-point',
    ]);
  });
});
