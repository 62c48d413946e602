// Logging: how much, and in which format.
import { z } from 'zod';
import { variable } from './variable.js';

export const logVariables = {
  LOG_LEVEL: variable({
    section: 'log',
    description: 'pino log level: fatal, error, warn, info, debug, trace or silent.',
    default: 'info',
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  }),
  LOG_FORMAT: variable({
    section: 'log',
    description:
      'json, pretty, or auto: pretty (colourised, one line per event) on a terminal, JSON lines otherwise.',
    default: 'auto',
    schema: z.enum(['auto', 'json', 'pretty']),
  }),
} as const;
