// Static files for the pages, all served from this origin (the pages load nothing from other hosts): our own
// stylesheet and script from public/, and the browser builds of the libraries the owner's week preview runs
// (FullCalendar and the ical.js it parses feeds with). An allowlist, not a directory: only the files named here
// can be fetched, whatever the path asks for. Their names carry the package version, so they are cached for a
// year as immutable; our own files are revalidated (ETag) so a deploy is seen at once.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

export const ASSETS_PATH = '/assets';

const require = createRequire(import.meta.url);
// src/web and dist/web both sit two levels below the checkout, where public/ is.
const PUBLIC_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../public');

interface AssetSource {
  file: string;
  type: string;
  immutable: boolean;
}

/** A package's own directory, found up from its main entry (the packages' `exports` hide their browser builds). */
function packageDir(name: string): string {
  let dir = path.dirname(require.resolve(name));
  while (!existsSync(path.join(dir, 'package.json')) || !dir.endsWith(path.join('node_modules', name))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`package ${name} has no folder of its own`);
    dir = parent;
  }
  return dir;
}

function packageVersion(name: string): string {
  const manifest = JSON.parse(readFileSync(path.join(packageDir(name), 'package.json'), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

function vendor(name: string, file: string, assetName: string): [string, AssetSource] {
  return [
    `vendor/${assetName}-${packageVersion(name)}.js`,
    { file: path.join(packageDir(name), file), type: JS, immutable: true },
  ];
}

/** Asset name (under /assets/) → file. Pages link them through assetUrl, so a name cannot drift. */
function assetSources(): Map<string, AssetSource> {
  return new Map([
    ['slotfeed.css', { file: path.join(PUBLIC_DIR, 'slotfeed.css'), type: CSS, immutable: false }],
    ['slotfeed.js', { file: path.join(PUBLIC_DIR, 'slotfeed.js'), type: JS, immutable: false }],
    ['share.js', { file: path.join(PUBLIC_DIR, 'share.js'), type: JS, immutable: false }],
    ['week-preview.js', { file: path.join(PUBLIC_DIR, 'week-preview.js'), type: JS, immutable: false }],
    vendor('@fullcalendar/core', 'index.global.min.js', 'fullcalendar-core'),
    // The time grid is built on the day grid's internals.
    vendor('@fullcalendar/daygrid', 'index.global.min.js', 'fullcalendar-daygrid'),
    vendor('@fullcalendar/timegrid', 'index.global.min.js', 'fullcalendar-timegrid'),
    vendor('@fullcalendar/icalendar', 'index.global.min.js', 'fullcalendar-icalendar'),
    vendor('@fullcalendar/luxon3', 'index.global.min.js', 'fullcalendar-luxon3'),
    vendor('ical.js', 'build/ical.min.js', 'ical'),
    vendor('luxon', 'build/global/luxon.min.js', 'luxon'),
  ]);
}

let sources: Map<string, AssetSource> | undefined;

/** The URL of a known asset; throws for an unknown one, so a typo fails at the first render in any test. */
export function assetUrl(prefix: string): string {
  sources ??= assetSources();
  const name = [...sources.keys()].find((key) => key === prefix || key.startsWith(`vendor/${prefix}-`));
  if (name === undefined) throw new Error(`no asset named ${prefix}`);
  return `${ASSETS_PATH}/${name}`;
}

interface LoadedAsset {
  body: Buffer;
  type: string;
  etag: string;
  immutable: boolean;
}

export function registerAssetRoutes(app: FastifyInstance): void {
  sources ??= assetSources();
  const loaded = new Map<string, LoadedAsset>();
  // Read on first request, then kept: a handful of files, ~400 KiB in all.
  const load = (name: string): LoadedAsset | undefined => {
    const source = sources?.get(name);
    if (source === undefined) return undefined;
    let asset = loaded.get(name);
    if (asset === undefined) {
      const body = readFileSync(source.file);
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
      asset = { body, type: source.type, etag, immutable: source.immutable };
      loaded.set(name, asset);
    }
    return asset;
  };

  app.get<{ Params: { '*': string } }>(`${ASSETS_PATH}/*`, async (request, reply) => {
    const asset = load(request.params['*']);
    if (asset === undefined) return reply.code(404).type('text/plain; charset=utf-8').send('Not found\n');
    reply
      .header('content-type', asset.type)
      .header('etag', asset.etag)
      .header('x-content-type-options', 'nosniff')
      .header(
        'cache-control',
        asset.immutable ? 'public, max-age=31536000, immutable' : 'public, max-age=0, must-revalidate',
      );
    if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    return reply.send(asset.body);
  });
}
