// The README's sample of what `npm run demo` prints is held to what a real run prints (issue 44): each of its
// lines, in order, has the shape of a line of the run's output. A shape keeps the words and drops what differs
// from run to run: numbers, addresses, paths, tokens and quoted names. Lines of "…" stand for lines left out.

/** The lines of the fenced block that follows "prints (shortened):" in the README. */
export function readmeDemoSample(readme: string): string[] {
  const start = readme.indexOf('prints (shortened):');
  if (start < 0) throw new Error('the README has no "prints (shortened):" sample');
  const block = /```\n([\s\S]*?)\n```/.exec(readme.slice(start));
  if (!block) throw new Error('no fenced block after "prints (shortened):"');
  return block[1]!.split('\n');
}

/** A URL keeps its scheme and its path's words; its host and port, numbers and tokens go. */
function urlShape(url: string): string {
  const { protocol, pathname } = new URL(url);
  return `${protocol}//HOST${pathname.replace(/[A-Za-z0-9_-]*\d[A-Za-z0-9_-]*|[A-Za-z0-9_-]{20,}/g, 'ID')}`;
}

export function lineShape(line: string): string {
  return (
    line
      .replace(/\b(?:https?|webcal|redis|postgresql):\/\/[^\s,)'"]*/g, urlShape)
      .replace(/(?<![\w/:-])[\w.@~-]*\/[\w.@~/-]*/g, (path) => (path.startsWith('//HOST') ? path : 'PATH'))
      .replace(/"[^"]*"/g, '"…"')
      // A token may begin or end with "-", which a word boundary would leave outside it: bounded by what it is made of.
      .replace(
        /(?<![A-Za-z0-9_-])(?:[A-Za-z0-9_-]*\d[A-Za-z0-9_-]*[A-Za-z][A-Za-z0-9_-]*|[A-Za-z0-9_-]{20,})(?![A-Za-z0-9_-])/g,
        'TOKEN',
      )
      .replace(/\d+(?:\.\d+)?/g, 'N')
      .trimEnd()
  );
}

/** The sample's lines that no line of `output` matches in order (the "…" lines and blank ones aside). */
export function sampleLinesMissingFrom(sample: string[], output: string): string[] {
  const shapes = output.split('\n').map(lineShape);
  const missing: string[] = [];
  let at = 0;
  for (const line of sample) {
    if (line.trim() === '' || line.trim() === '…') continue;
    const found = shapes.indexOf(lineShape(line), at);
    if (found < 0) missing.push(line);
    else at = found + 1;
  }
  return missing;
}
