// A BullMQ queue whose connection errors go to the repeated-error log: without a listener BullMQ prints each
// one with console.error, outside the JSON log. Every queue slotfeed produces to is made here.
import { Queue, type ConnectionOptions } from 'bullmq';
import type { RepeatedErrorLog } from './repeated-errors.js';

export interface QueueSettings {
  connection: ConnectionOptions;
  /** Redis key prefix of every queue (REDIS_PREFIX). */
  prefix: string;
  errors: RepeatedErrorLog;
}

/** `label` names the queue in the error log (default "<name> queue"). */
export function createObservedQueue<Data>(
  name: string,
  settings: QueueSettings,
  label = `${name} queue`,
): Queue<Data> {
  const queue = new Queue<Data>(name, { connection: settings.connection, prefix: settings.prefix });
  queue.on('error', (error) => settings.errors.report(label, error));
  return queue;
}
