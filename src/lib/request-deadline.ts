// A request's time limit that ends with the request. AbortSignal.timeout cannot be cleared: its timer fires at the
// limit however long ago its request was answered, and aborts a signal the request's listeners still hold, making a
// DOMException for nobody: CPU spent on every request once its limit comes due (measured in docs/performance.md,
// "A request's time limit ends with it"). Every upstream call and every CalDAV request has one, so an installation
// paid that on each of them. This limit is let go when its request ends.

export interface RequestDeadline {
  /** Aborted at the limit (a TimeoutError), or with the caller's own reason when the caller's signal aborts. */
  readonly signal: AbortSignal;
  /** The limit passed before the request ended (the caller's own abort is not this). */
  readonly expired: boolean;
  /** The request has ended: its limit is let go, and the caller's abort no longer reaches it. */
  end(): void;
}

export function requestDeadline(limitMs: number, caller?: AbortSignal): RequestDeadline {
  const controller = new AbortController();
  let expired = false;
  const passCallerOn = () => controller.abort(caller?.reason);
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(new DOMException(`no answer within ${limitMs} ms`, 'TimeoutError'));
  }, limitMs);
  // As AbortSignal.timeout's: a limit alone keeps no process alive (the request's socket does while it is open).
  timer.unref();
  if (caller?.aborted) controller.abort(caller.reason);
  else caller?.addEventListener('abort', passCallerOn, { once: true });
  return {
    signal: controller.signal,
    get expired() {
      return expired;
    },
    end() {
      clearTimeout(timer);
      caller?.removeEventListener('abort', passCallerOn);
    },
  };
}
