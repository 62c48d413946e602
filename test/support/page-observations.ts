// What one visit of a page shows a careful reader: its status, whether it is wider than the window (and which
// element makes it so), its serious accessibility problems (axe-core), requests to other hosts, and Content
// Security Policy refusals. Each finding is a readable line, so a failing check says what to fix.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import type { PreparedSite } from './prepared-site.js';
import type { SitePage } from './site-pages.js';

export interface PageObservations {
  status: number;
  /** Why the document is wider than the window, or null when it fits. */
  overflow: string | null;
  /** One line per serious or critical axe violation: rule, impact, what it means, where. */
  accessibility: string[];
  /** URLs requested from anywhere but the site's own origin (or data:). */
  elsewhere: string[];
  /** Console messages of CSP refusals. */
  cspRefusals: string[];
}

const SERIOUS = new Set(['serious', 'critical']);
const TARGETS_SHOWN = 5;

// Runs in the page (a string: the project's TypeScript has no DOM types). Elements inside a box that scrolls
// or clips sideways (`.table-scroll`) do not widen the document and are not blamed; of the rest that reach
// past the right edge, the widest is named, by a selector built from its tag, id, classes and two ancestors.
const WIDEST_OVERFLOW_SCRIPT = `(() => {
  const windowWidth = window.innerWidth;
  const documentWidth = document.documentElement.scrollWidth;
  if (documentWidth <= windowWidth) return null;
  const root = document.documentElement;
  const contained = (element) => {
    for (let box = element.parentElement; box && box !== document.body && box !== root; box = box.parentElement) {
      if (getComputedStyle(box).overflowX !== 'visible' && box.getBoundingClientRect().right <= windowWidth + 0.5) return true;
    }
    return false;
  };
  const part = (element) => {
    if (element.id) return element.tagName.toLowerCase() + '#' + element.id;
    const classes = [...element.classList].slice(0, 3).map((c) => '.' + c).join('');
    const parent = element.parentElement;
    const same = parent ? [...parent.children].filter((c) => c.tagName === element.tagName) : [];
    const nth = !classes && same.length > 1 ? ':nth-of-type(' + (same.indexOf(element) + 1) + ')' : '';
    return element.tagName.toLowerCase() + classes + nth;
  };
  const selectorOf = (element) => {
    const parts = [part(element)];
    for (let up = element.parentElement; up && up !== document.body && parts.length < 3 && !parts[0].includes('#'); up = up.parentElement) {
      parts.unshift(part(up));
      if (up.id) break;
    }
    return parts.join(' > ');
  };
  let widest = null;
  let widestRect = null;
  for (const element of document.body.querySelectorAll('*')) {
    const rect = element.getBoundingClientRect();
    if (rect.width === 0 || rect.right <= windowWidth + 0.5 || contained(element)) continue;
    if (widestRect === null || rect.width > widestRect.width) {
      widest = element;
      widestRect = rect;
    }
  }
  const blame = widest === null
    ? 'no single element reaches past the edge (a margin or a transform?)'
    : 'widest element past the edge: ' + selectorOf(widest) + ' (' + Math.round(widestRect.width) + 'px wide, right edge at ' + Math.round(widestRect.right) + 'px)';
  return 'the document is ' + documentWidth + 'px wide in a ' + windowWidth + 'px window; ' + blame;
})()`;

/** Serious and critical axe violations, one line each; `rules` limits the run to those rules. */
export async function seriousAxeViolations(tab: Page, rules?: string[]): Promise<string[]> {
  const builder = new AxeBuilder({ page: tab });
  const results = await (rules === undefined ? builder : builder.withRules(rules)).analyze();
  return results.violations
    .filter((violation) => SERIOUS.has(violation.impact ?? ''))
    .map((violation) => {
      const targets = violation.nodes.map((node) => node.target.join(' '));
      const more = targets.length > TARGETS_SHOWN ? ` and ${targets.length - TARGETS_SHOWN} more` : '';
      return (
        `${violation.id} (${violation.impact}): ${violation.help} — at ` +
        `${targets.slice(0, TARGETS_SHOWN).join(', ')}${more}`
      );
    });
}

/**
 * Visits `sitePage` in `tab` and notes everything the checks ask about. With `onlyRules`, axe runs just those
 * rules (the dark-mode pass asks only about colour contrast).
 */
export async function observePage(
  site: PreparedSite,
  tab: Page,
  sitePage: SitePage,
  options: { onlyRules?: string[] } = {},
): Promise<PageObservations> {
  const elsewhere: string[] = [];
  const cspRefusals: string[] = [];
  tab.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith('data:') && new URL(url).origin !== site.url) elsewhere.push(url);
  });
  tab.on('console', (message) => {
    if (/Content Security Policy|Refused to /i.test(message.text())) cspRefusals.push(message.text());
  });
  const response = await site.visit(tab, sitePage);
  const overflow = await tab.evaluate<string | null>(WIDEST_OVERFLOW_SCRIPT);
  const accessibility = await seriousAxeViolations(tab, options.onlyRules);
  return { status: response.status(), overflow, accessibility, elsewhere, cspRefusals };
}
