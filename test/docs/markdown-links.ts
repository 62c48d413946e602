// What a Markdown page links to and which anchors its headings give, as GitHub renders it: enough Markdown for
// this project's README and docs/ (inline links and images, reference definitions, autolinks and bare URLs,
// ATX headings), with fenced code blocks and code spans left out, since nothing in them is a link.

export interface Link {
  /** 1-based line of the page. */
  line: number;
  target: string;
}

/** The page's lines with fenced code blocks blanked, so that line numbers stay. */
function unfencedLines(markdown: string): string[] {
  let fence: string | null = null;
  return markdown.split('\n').map((line) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === null && marker !== undefined) {
      fence = marker;
      return '';
    }
    if (fence !== null) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = null;
      return '';
    }
    return line;
  });
}

/** Prose only: fenced code blocks blanked and code spans removed. */
function proseLines(markdown: string): string[] {
  return unfencedLines(markdown).map((line) => line.replace(/(`+)[^`]*?\1/g, ''));
}

export function linksOf(markdown: string): Link[] {
  const links: Link[] = [];
  proseLines(markdown).forEach((line, index) => {
    const add = (target: string) => links.push({ line: index + 1, target });
    for (const m of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) add(m[1]!);
    const definition = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(line);
    if (definition) add(definition[1]!);
    for (const m of line.matchAll(/<([a-z][a-z0-9+.-]*:[^>\s]+)>/gi)) add(m[1]!);
    // A bare URL GitHub turns into a link by itself (one already inside a link above is not counted twice).
    const bare = line.replace(/\]\([^)]*\)|<[^>]*>/g, '');
    for (const m of bare.matchAll(/\b(?:https?:\/\/|www\.)[^\s<>)]+/gi)) add(m[0].replace(/[.,:;!?]+$/, ''));
  });
  return links;
}

/** The anchor GitHub gives a heading's text: lower case, punctuation dropped, spaces as hyphens. */
export function slugOf(heading: string): string {
  return heading
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');
}

/**
 * Every anchor the page's headings give, a repeated heading's with -1, -2, … as GitHub numbers them, and every
 * explicit `<a id="…">` (for a point that is not a heading, such as one bullet of a list).
 */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of unfencedLines(markdown)) {
    for (const explicit of line.matchAll(/<a\s+(?:id|name)="([^"]+)"\s*>/g)) anchors.add(explicit[1]!);
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = slugOf(heading[1]!);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** A link that leaves the repository: any scheme (http:, mailto:, …), a protocol-relative or a bare www. one. */
export function isOutside(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//') || /^www\./i.test(target);
}
