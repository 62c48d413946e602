// The demo's web port is part of every feed URL it prints, and calendars keep those URLs. So the first run's
// port is recorded in the data directory and every later run asks for it again; a person who chose WEB_PORT
// gets that one (and it is recorded). When the recorded port is taken by another program the demo still
// starts, on another port, and says loudly that the feed URLs differ this time; the record stays, so the next
// run gets the old URLs back.
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { HeldPort } from './free-port.js';

type Env = Record<string, string | undefined>;

export const PREFERRED_WEB_PORT = 3000;

export interface WebPortChoice {
  port: number;
  /** Printed before anything else when the feed URLs will not be the recorded ones. */
  warning?: string;
  /**
   * The port, held from the moment it was found free until the web role listens (free-port.ts says why); none
   * when WEB_PORT named it, which the caller holds if it can.
   */
  held?: HeldPort;
}

export interface WebPortDeps {
  /** Holds `preferred` when it is free on 127.0.0.1, else a free ephemeral port. */
  holdPort(preferred?: number): Promise<HeldPort>;
  /** WEB_PORT as config reads it (0: any free port), or undefined when unset. */
  requested: number | undefined;
  recordFile: string;
  /** Who listens on `port`, in a few words, when that can be known. */
  holderOf(port: number): Promise<string | undefined>;
}

/** Why a port the demo wanted is not its own, naming who holds it when that is known. */
async function takenBy(deps: WebPortDeps, port: number): Promise<string> {
  const holder = await deps.holderOf(port);
  return holder === undefined ? 'another program' : holder;
}

async function recordedPort(file: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (thrown: unknown) {
    if ((thrown as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw thrown;
  }
  const port = Number(text.trim());
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new Error(`${file} does not hold a port number ("${text.trim()}"); delete it to choose a new one`);
  }
  return port;
}

async function recordPort(file: string, port: number): Promise<void> {
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, `${port}\n`);
  await rename(partial, file);
}

export async function chooseDemoWebPort(deps: WebPortDeps): Promise<WebPortChoice> {
  if (deps.requested === 0) {
    const held = await deps.holdPort();
    return { port: held.port, held };
  }
  if (deps.requested !== undefined) {
    await recordPort(deps.recordFile, deps.requested);
    return { port: deps.requested };
  }
  const recorded = await recordedPort(deps.recordFile);
  if (recorded === undefined) {
    const held = await deps.holdPort(PREFERRED_WEB_PORT);
    const { port } = held;
    await recordPort(deps.recordFile, port).catch(async (error: unknown) => {
      await held.release();
      throw error;
    });
    if (port === PREFERRED_WEB_PORT) return { port, held };
    // The README's addresses say 3000: a person following them would reach whoever holds it.
    return {
      port,
      held,
      warning: [
        `!! Port ${PREFERRED_WEB_PORT}, which the README's addresses use, is taken by ${await takenBy(deps, PREFERRED_WEB_PORT)}.`,
        `!! This demo serves on port ${port} (kept for its next runs): use the addresses printed below, not :${PREFERRED_WEB_PORT}.`,
      ].join('\n'),
    };
  }
  const held = await deps.holdPort(recorded);
  const { port } = held;
  if (port === recorded) return { port, held };
  return {
    port,
    held,
    warning: [
      `!! Port ${recorded}, which this demo's feed URLs use, is taken by ${await takenBy(deps, recorded)}.`,
      `!! This run uses port ${port}: the feed URLs printed below are not the ones calendars subscribed to.`,
      `!! Stop the program on port ${recorded} and start the demo again to get them back (recorded in ${deps.recordFile}).`,
    ].join('\n'),
  };
}

export function requestedWebPort(env: Env, parse: (value: string) => number): number | undefined {
  return env.WEB_PORT === undefined || env.WEB_PORT === '' ? undefined : parse(env.WEB_PORT);
}
