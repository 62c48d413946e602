// Logging: how much, and in which format.
import { z } from 'zod';
import { section, variable } from './variable.js';

export const logSection = section({
  variables: {
    level: variable({
      name: 'LOG_LEVEL',
      description: 'pino log level: fatal, error, warn, info, debug, trace or silent.',
      default: 'info',
      schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    }),
    format: variable({
      name: 'LOG_FORMAT',
      description:
        'json, pretty, or auto: pretty (colourised, one line per event) on a terminal, JSON lines otherwise.',
      default: 'auto',
      schema: z.enum(['auto', 'json', 'pretty']),
    }),
  },
});
