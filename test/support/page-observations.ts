// What one visit of a page shows a careful reader: its status, the width it is laid out at, whether it is wider
// than the window (and which element makes it so), controls cut off at the side, its serious accessibility
// problems (axe-core), requests to other hosts, and Content Security Policy refusals. Each finding is a
// readable line, so a failing check says what to fix.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import type { PreparedSite } from './prepared-site.js';
import type { SitePage } from './site-pages.js';

export interface PageObservations {
  status: number;
  /** The width the page is laid out at, in CSS pixels: a phone's own width only with a viewport meta tag. */
  layoutWidth: number;
  /** Why the document is wider than the window, or null when it fits. */
  overflow: string | null;
  /** One line per button, link or field whose box is cut at the side by a box around it or the window. */
  cutControls: string[];
  /** One line per serious or critical axe violation: rule, impact, what it means, where. */
  accessibility: string[];
  /** URLs requested from anywhere but the page's own origin (or data:). */
  elsewhere: string[];
  /** Console messages of CSP refusals. */
  cspRefusals: string[];
  /** Resources the page asked for that failed to load (an icon answered 404, say), as the console names them. */
  failedResources: string[];
}

const SERIOUS = new Set(['serious', 'critical']);
const TARGETS_SHOWN = 5;

// Runs in the page (strings: the project's TypeScript has no DOM types). Names an element by a selector built
// from its tag, id, classes and two ancestors.
const SELECTOR_OF = `
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
`;

// The window's width is the root's client width: a mobile browser widens its layout viewport (innerWidth) to
// a page that is too wide rather than let it scroll, so innerWidth would hide the very overflow looked for.
// Elements inside a box that scrolls or clips sideways (`.table-scroll`) do not widen the document and are not
// blamed; of the rest that reach past the right edge, the widest is named.
const WIDEST_OVERFLOW_SCRIPT = `(() => {
  const root = document.documentElement;
  const windowWidth = root.clientWidth;
  const documentWidth = root.scrollWidth;
  if (documentWidth <= windowWidth) return null;
  const contained = (element) => {
    for (let box = element.parentElement; box && box !== document.body && box !== root; box = box.parentElement) {
      if (getComputedStyle(box).overflowX !== 'visible' && box.getBoundingClientRect().right <= windowWidth + 0.5) return true;
    }
    return false;
  };
  ${SELECTOR_OF}
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

// Every visible button, link and field whose box reaches past the side of a box that clips or scrolls
// sideways around it (a table's scroll box: its Remove buttons out of sight until one thinks of scrolling
// it), or past the window's side: on a phone, part of it is out of sight and a tap may miss. Only sideways:
// scrolling down inside a box (a calendar's hours) is expected. A control wholly off to one side of the
// window and in no such box is hidden on purpose (a skip link until it has focus), not cut.
const CUT_CONTROLS_SCRIPT = `(() => {
  const root = document.documentElement;
  const windowWidth = root.clientWidth;
  ${SELECTOR_OF}
  const controls = 'a[href], button, input:not([type="hidden"]), select, textarea, summary, [role="button"], [role="link"]';
  const spans = (rect) => 'spans ' + Math.round(rect.left) + '-' + Math.round(rect.right) + 'px';
  const cutBy = (control, rect) => {
    for (let box = control.parentElement; box && box !== document.body && box !== root; box = box.parentElement) {
      if (getComputedStyle(box).overflowX === 'visible') continue;
      const left = box.getBoundingClientRect().left + box.clientLeft;
      const right = left + box.clientWidth;
      if (rect.left < left - 0.5 || rect.right > right + 0.5) {
        return spans(rect) + ', cut by ' + selectorOf(box) + ' (' + Math.round(left) + '-' + Math.round(right) + 'px)';
      }
    }
    if (rect.right <= 0 || rect.left >= windowWidth) return null;
    if (rect.left < -0.5 || rect.right > windowWidth + 0.5) return spans(rect) + ' in a ' + windowWidth + 'px window';
    return null;
  };
  const cut = [];
  for (const control of document.querySelectorAll(controls)) {
    const rect = control.getBoundingClientRect();
    if (rect.width === 0 || rect.height === 0) continue;
    if (!control.checkVisibility({ visibilityProperty: true, opacityProperty: true })) continue;
    const how = cutBy(control, rect);
    if (how === null) continue;
    const name = (control.getAttribute('aria-label') || control.textContent || control.value || '').trim().replace(/\\s+/g, ' ').slice(0, 30);
    cut.push(selectorOf(control) + (name ? ' "' + name + '"' : '') + ': ' + how);
  }
  return cut;
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
  const requested: string[] = [];
  const cspRefusals: string[] = [];
  const failedLoads: { url: string; text: string }[] = [];
  tab.on('request', (request) => {
    if (!request.url().startsWith('data:')) requested.push(request.url());
  });
  tab.on('console', (message) => {
    if (/Content Security Policy|Refused to /i.test(message.text())) cspRefusals.push(message.text());
    // Chromium says so for every resource that failed, the icon it asks for by itself included.
    if (message.type() === 'error' && message.text().startsWith('Failed to load resource'))
      failedLoads.push({ url: message.location().url, text: message.text() });
  });
  const response = await site.visit(tab, sitePage);
  // The page's own origin is the one its address named (the site's, or the simulator's for its consent page),
  // before any redirect: a redirect to another host is a request elsewhere.
  let first = response.request();
  for (let before = first.redirectedFrom(); before !== null; before = before.redirectedFrom()) first = before;
  const origin = new URL(first.url()).origin;
  const elsewhere = requested.filter((url) => new URL(url).origin !== origin);
  const layoutWidth = await tab.evaluate<number>('document.documentElement.clientWidth');
  const overflow = await tab.evaluate<string | null>(WIDEST_OVERFLOW_SCRIPT);
  const cutControls = await tab.evaluate<string[]>(CUT_CONTROLS_SCRIPT);
  const accessibility = await seriousAxeViolations(tab, options.onlyRules);
  return {
    status: response.status(),
    layoutWidth,
    overflow,
    cutControls,
    accessibility,
    elsewhere,
    cspRefusals,
    // The document itself may answer an error on purpose (SitePage.status): its own status is checked apart.
    failedResources: failedLoads
      .filter(({ url }) => url !== response.url())
      .map(({ url, text }) => `${url}: ${text}`),
  };
}
