// A pooled connection held between statements (a report export's, a sync's transaction), heard from checkout to
// release. pg-pool takes its own 'error' listener off a connection while it is checked out, and a connection the
// server ends while it waits idle in its transaction (an export waiting for a second connection or its part's turn,
// a sync's commit between two statements) tells only by that event, which unheard would end the process. The holder
// meets the failure itself at its next statement or read on that connection.
import type pg from 'pg';

export interface HeldConnection {
  client: pg.PoolClient;
  /** Back to the pool, or closed (its state unknown: a COPY cut off, a failed statement); once, whatever is called after. */
  release(close?: boolean): void;
}

/** `client`, just checked out, held until released; `released` runs then (a budget given back). */
export function held(client: pg.PoolClient, released?: () => void): HeldConnection {
  const heard = () => undefined;
  client.on('error', heard);
  let back = false;
  return {
    client,
    release(close = false) {
      if (back) return;
      back = true;
      client.removeListener('error', heard);
      client.release(close);
      released?.();
    },
  };
}
