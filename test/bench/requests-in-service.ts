// How busy a CalDAV server was over a measure (issue 43): the share of the time it had at least one request in
// service (its busy fraction) and the mean number in service, integrated exactly at each request's start and end.
// A server of the bench's own counts on its side (minimal-caldav-host.ts); a server no one here wrote (Radicale)
// is counted from the client's side, through node:http's diagnostics channels, which see every request of this
// process (slotfeed's CalDAV transport and the bare client alike are node:http): on loopback, a request is in
// service from the moment it is sent until its answer's headers arrive.
import diagnosticsChannel from 'node:diagnostics_channel';
import type { ClientRequest } from 'node:http';

export interface InServiceFigures {
  /** Share of the measured time with at least one request in service (0–1). */
  busyFraction: number;
  /** Time-weighted mean of the requests in service. */
  meanInService: number;
  /** The most at once. */
  most: number;
  requests: number;
  elapsedMs: number;
}

/** Counts requests in service over time; `reset` starts a new measure. */
export class InServiceMeter {
  private count = 0;
  private most = 0;
  private requests = 0;
  private startedAt = performance.now();
  private lastAt = this.startedAt;
  private area = 0;
  private busyMs = 0;

  private advance(): void {
    const now = performance.now();
    const dt = now - this.lastAt;
    this.area += dt * this.count;
    if (this.count > 0) this.busyMs += dt;
    this.lastAt = now;
  }

  enter(): void {
    this.advance();
    this.count += 1;
    this.requests += 1;
    this.most = Math.max(this.most, this.count);
  }

  leave(): void {
    this.advance();
    this.count = Math.max(0, this.count - 1);
  }

  inService(): number {
    return this.count;
  }

  reset(): void {
    this.advance();
    this.startedAt = this.lastAt;
    this.area = 0;
    this.busyMs = 0;
    this.requests = 0;
    this.most = this.count;
  }

  read(): InServiceFigures {
    this.advance();
    const elapsedMs = this.lastAt - this.startedAt;
    return {
      busyFraction: elapsedMs > 0 ? this.busyMs / elapsedMs : 0,
      meanInService: elapsedMs > 0 ? this.area / elapsedMs : 0,
      most: this.most,
      requests: this.requests,
      elapsedMs,
    };
  }
}

/**
 * A meter of this process's node:http requests to `origin` (e.g. http://127.0.0.1:41017), counted from the
 * client's side until `stop()`.
 */
export function meterClientRequestsTo(origin: string): InServiceMeter & { stop(): void } {
  const host = new URL(origin).host;
  const meter = new InServiceMeter();
  const open = new WeakSet<ClientRequest>();
  const started = (message: unknown) => {
    const { request } = message as { request: ClientRequest };
    if (request.getHeader('host') !== host) return;
    open.add(request);
    meter.enter();
  };
  const ended = (message: unknown) => {
    const { request } = message as { request: ClientRequest };
    if (!open.delete(request)) return;
    meter.leave();
  };
  diagnosticsChannel.subscribe('http.client.request.start', started);
  diagnosticsChannel.subscribe('http.client.response.finish', ended);
  diagnosticsChannel.subscribe('http.client.request.error', ended);
  return Object.assign(meter, {
    stop() {
      diagnosticsChannel.unsubscribe('http.client.request.start', started);
      diagnosticsChannel.unsubscribe('http.client.response.finish', ended);
      diagnosticsChannel.unsubscribe('http.client.request.error', ended);
    },
  });
}
