// `npm run screenshots`: every page of the site (test/support/site-pages.ts), prepared as the in-browser checks
// prepare it (test/support/prepared-site.ts), photographed whole at desktop and phone width into
// docs/screenshots/<name>-desktop.png and <name>-phone.png. Needs what the tests need: Postgres and Redis
// answering, or the fallbacks test-services.ts starts when they do not.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServices, stopTestServices } from '../test/support/test-services.js';

const OUT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../docs/screenshots');

async function photographEveryPage(): Promise<string[]> {
  // Imported only now: the test database module reads TEST_DATABASE_ADMIN_URL when it loads, which
  // startTestServices may just have pointed at a fallback.
  const { prepareSite } = await import('../test/support/prepared-site.js');
  const { SITE_PAGES, VIEWPORTS } = await import('../test/support/site-pages.js');
  await mkdir(OUT_DIR, { recursive: true });
  const site = await prepareSite('screenshots');
  const written: string[] = [];
  try {
    for (const sitePage of SITE_PAGES) {
      for (const viewport of VIEWPORTS) {
        const tab = await site.openTab(sitePage.viewer, viewport);
        try {
          const response = await site.visit(tab, sitePage);
          const status = response.status();
          const expected =
            sitePage.status === undefined ? status >= 200 && status < 300 : status === sitePage.status;
          if (!expected) process.stderr.write(`warning: ${sitePage.name} answered ${status}\n`);
          const file = path.join(OUT_DIR, `${sitePage.name}-${viewport.label}.png`);
          await tab.screenshot({ path: file, fullPage: true });
          written.push(path.relative(process.cwd(), file));
        } finally {
          await tab.close();
        }
      }
    }
  } finally {
    await site.close();
  }
  return written;
}

await startTestServices(process.env);
try {
  const written = await photographEveryPage();
  console.log(written.join('\n'));
} finally {
  await stopTestServices();
}
