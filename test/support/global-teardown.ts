// Jest global teardown: stops the fallbacks global-setup.ts started, if any. Loaded like global-setup.ts (see
// there why test-services.ts comes in through tsx, and why this file cannot import global-setup.ts).
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { tsImport } from 'tsx/esm/api';
// Type only: erased, so nothing is required through jest's CommonJS loading.
import type * as TestServicesModule from './test-services.js';

type TestServices = typeof TestServicesModule;

export default async function globalTeardown(_globalConfig: unknown, projectConfig: { rootDir: string }) {
  const url = pathToFileURL(path.join(projectConfig.rootDir, 'test', 'support', 'test-services.ts')).href;
  const services = (await tsImport(url, url)) as TestServices;
  await services.stopTestServices();
}
