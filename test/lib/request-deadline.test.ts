// A request's time limit ends with the request (request-deadline.ts): a limit that fires long after its request
// was answered aborts a signal the request's listeners still hold, and costs CPU for nobody. Each wait below is a
// timer set after the limit's own with the same or a longer delay: Node runs timers in the order they expire, so
// once it has fired, a limit that was not let go has fired too, however busy the machine.
import { describe, expect, it } from '@jest/globals';
import { requestDeadline } from '../../src/lib/request-deadline.js';

const timerAfter = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('requestDeadline', () => {
  it('aborts its signal with a TimeoutError at the limit, and says it expired', async () => {
    const deadline = requestDeadline(5);
    await timerAfter(5);
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.expired).toBe(true);
    expect((deadline.signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('never aborts once its request has ended', async () => {
    const deadline = requestDeadline(5);
    deadline.end();
    await timerAfter(5);
    expect(deadline.signal.aborted).toBe(false);
    expect(deadline.expired).toBe(false);
  });

  it("passes the caller's abort on with its reason, which is no expiry", () => {
    const caller = new AbortController();
    const deadline = requestDeadline(60_000, caller.signal);
    const reason = new Error('shutting down');
    caller.abort(reason);
    expect(deadline.signal.reason).toBe(reason);
    expect(deadline.expired).toBe(false);
    deadline.end();
  });

  it("is aborted from the start by a caller's signal aborted already", () => {
    const caller = new AbortController();
    caller.abort(new Error('stopped'));
    const deadline = requestDeadline(60_000, caller.signal);
    expect(deadline.signal.aborted).toBe(true);
    deadline.end();
  });

  it("is not reached by the caller's abort after its request ended", () => {
    const caller = new AbortController();
    const deadline = requestDeadline(60_000, caller.signal);
    deadline.end();
    caller.abort(new Error('shutting down'));
    expect(deadline.signal.aborted).toBe(false);
  });
});
