// Moved to lib/worker-errors.ts (it is generic: any BullMQ worker's errors). Kept for scheduler.ts, whose import
// follows with its pending change; nothing else imports this.
export * from '../lib/worker-errors.js';
