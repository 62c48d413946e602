// Completes package-lock.json after `npm install` on this network. The registry mirror here does not serve
// every platform's prebuilt binaries (e.g. @swc/core-darwin-arm64 answers 404), so npm leaves those optional
// packages out of the lock file, and `npm ci` then refuses the lock as out of sync with package.json. Each
// missing optional dependency gets an entry marked optional: `npm ci` on Linux skips it, and on a machine
// whose platform needs it, npm fetches it like any optional dependency.
// Usage: node .ci/complete-lockfile.mjs   (npm run lock:complete)
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const packages = lock.packages;
const added = [];
for (const [location, meta] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(meta.optionalDependencies ?? {})) {
    const nested = `${location ? `${location}/` : ''}node_modules/${name}`;
    const hoisted = `node_modules/${name}`;
    if (packages[nested] || packages[hoisted]) continue;
    packages[hoisted] = { version, optional: true };
    added.push(`${name}@${version}`);
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)),
);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(
  added.length ? `added ${added.length} optional entries:\n  ${added.join('\n  ')}` : 'lock file complete',
);
