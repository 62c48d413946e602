// Every page of the site (test/support/site-pages.ts) in Chromium, as its viewer sees it, at a desktop and a
// phone width: it answers, is laid out at the window's width, fits it, cuts off no control at the side, has
// no serious accessibility problem, asks nothing of another host, loads everything it asks for, and breaks no
// rule of its Content Security Policy; in dark mode its colours still contrast. One browser for the file; each
// page visited once per width, in a tab of its own, one after another.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { observePage, type PageObservations } from '../support/page-observations.js';
import { prepareSite, type PreparedSite } from '../support/prepared-site.js';
import { SITE_PAGES, VIEWPORTS, type SitePage, type SiteViewport } from '../support/site-pages.js';
import { patient } from '../support/patience.js';

let site: PreparedSite;

beforeAll(async () => {
  site = await prepareSite('web_pages_in_browser');
}, patient(60_000));
afterAll(async () => {
  await site?.close();
});

/** One visit of the page, made before the checks that read it; the tab is closed once it is read. */
function observedOnce(
  sitePage: SitePage,
  viewport: SiteViewport,
  options: { dark?: boolean; onlyRules?: string[] } = {},
): () => PageObservations {
  let observed: PageObservations | undefined;
  beforeAll(async () => {
    const tab = await site.openTab(sitePage.viewer, viewport);
    try {
      if (options.dark) await tab.emulateMedia({ colorScheme: 'dark' });
      observed = await observePage(site, tab, sitePage, options);
    } finally {
      await tab.close();
    }
  }, patient(60_000));
  return () => {
    if (observed === undefined) throw new Error(`${sitePage.name} was not visited`);
    return observed;
  };
}

describe.each(SITE_PAGES.map((sitePage) => [sitePage.name, sitePage] as const))('%s', (_name, sitePage) => {
  describe.each(
    VIEWPORTS.map((viewport) => [viewport.label, viewport.width, viewport.height, viewport] as const),
  )('at %s width (%d×%d)', (_label, _width, _height, viewport) => {
    const observed = observedOnce(sitePage, viewport);

    it(`answers ${sitePage.status ?? '2xx'}`, () => {
      const { status } = observed();
      if (sitePage.status === undefined) expect(status >= 200 && status < 300 ? '2xx' : status).toBe('2xx');
      else expect(status).toBe(sitePage.status);
    });

    // A phone lays out a page without a viewport meta tag 980 px wide and shrinks it to a third.
    it('is laid out at the width of the window', () => {
      expect(observed().layoutWidth).toBe(viewport.width);
    });

    it('fits the window without scrolling sideways', () => {
      expect(observed().overflow).toBeNull();
    });

    it('cuts off no button, link or field at the side', () => {
      expect(observed().cutControls).toEqual([]);
    });

    it('has no serious or critical accessibility violation', () => {
      const known = sitePage.knownAxeViolations ?? [];
      const rule = (violation: string) => violation.slice(0, violation.indexOf(' '));
      expect(observed().accessibility.filter((v) => !known.includes(rule(v)))).toEqual([]);
    });

    it('requests nothing from another host', () => {
      expect(observed().elsewhere).toEqual([]);
    });

    it('breaks no rule of its Content Security Policy', () => {
      expect(observed().cspRefusals).toEqual([]);
    });

    // A missing icon is an error in the browser's console on every visit, where a person debugging looks first.
    it('loads everything it asks for, its icon included', () => {
      expect(observed().failedResources).toEqual([]);
    });
  });

  describe('in dark mode at desktop width', () => {
    const observed = observedOnce(sitePage, VIEWPORTS[0], { dark: true, onlyRules: ['color-contrast'] });

    it('has text that contrasts with its background', () => {
      expect(observed().accessibility).toEqual([]);
    });
  });
});
