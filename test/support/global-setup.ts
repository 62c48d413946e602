// Jest global setup: makes sure Postgres and Redis answer, starting fallbacks when they do not
// (test-services.ts). Jest loads this file as CommonJS outside its module map, where the project's `.js`
// import specifiers do not resolve to `.ts` sources; tsx's loader does, so the work is imported through it.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { tsImport } from 'tsx/esm/api';
// Type only: erased, so nothing is required through jest's CommonJS loading.
import type * as TestServicesModule from './test-services.js';

type TestServices = typeof TestServicesModule;

export default async function globalSetup(_globalConfig: unknown, projectConfig: { rootDir: string }) {
  const url = pathToFileURL(path.join(projectConfig.rootDir, 'test', 'support', 'test-services.ts')).href;
  const services = (await tsImport(url, url)) as TestServices;
  await services.startTestServices(process.env);
}
