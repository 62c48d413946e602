// Waiting for the operator's signal to stop: the daemon roles and the demo shut down in order on the first
// SIGINT, SIGTERM or SIGHUP. Lives in lib/ so the demo and the CLI can both use it without one importing the other.
import type { Logger } from '../log.js';

function memoryMiB(): Record<string, number> {
  const usage = process.memoryUsage();
  const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
  return {
    rss: mib(usage.rss),
    heapUsed: mib(usage.heapUsed),
    heapTotal: mib(usage.heapTotal),
    external: mib(usage.external),
    arrayBuffers: mib(usage.arrayBuffers),
  };
}

/**
 * One stop asked for by two routes: a terminal's Ctrl-C sends SIGINT to its whole foreground process group, so
 * under `npm run demo` it reaches the demo once directly and once more through npm, which passes the signals it
 * gets on to its child. Both arrive within milliseconds; a person pressing Ctrl-C again takes longer than this.
 */
const SAME_REQUEST_MS = 1_500;

/**
 * Resolves on the first SIGINT, SIGTERM or SIGHUP so the caller can shut down in order; a later signal means the
 * operator will not wait, so the process exits at once (one within SAME_REQUEST_MS of the first is the same
 * request).
 */
export function untilShutdownSignal(logger: Logger): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let received: { signal: NodeJS.Signals; at: number } | undefined;
    const onSignal = (signal: NodeJS.Signals) => {
      if (received) {
        if (performance.now() - received.at < SAME_REQUEST_MS) return;
        logger.warn({ signal }, 'second signal: exiting without finishing shutdown');
        process.exit(130);
      }
      received = { signal, at: performance.now() };
      // Memory at the end of a run is what operators size containers by (RSS, and what of it is JS heap).
      logger.info({ signal, memoryMiB: memoryMiB() }, 'shutting down (send the signal again to force)');
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    // A closed terminal: without a handler Node dies at once, and the servers the demo started in process
    // groups of their own (so that Ctrl-C reaches the demo alone) would be left running.
    process.on('SIGHUP', onSignal);
  });
}
