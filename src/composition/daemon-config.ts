// What the daemon's processes (`slotfeed start | worker | scheduler`, the demo) read of the settings: the
// sections every role may need, loaded and checked once at start-up.
import type { Config } from '../config.js';

export const DAEMON_SECTIONS = [
  'database',
  'redis',
  'log',
  'upstream',
  'vault',
  'sync',
  'web',
  'webhooks',
  'caldav',
] as const;

export type DaemonConfig = Pick<Config, (typeof DAEMON_SECTIONS)[number]>;
