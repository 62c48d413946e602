// A Chrome DevTools Protocol session with a Node process started with `--inspect=127.0.0.1:0`: how a benchmark
// makes a child process collect its garbage and report its heap without the child exposing anything of its own.
// Node prints the session's address on stderr ("Debugger listening on ws://…").

const LISTENING = /Debugger listening on (ws:\/\/\S+)/;

export interface InspectorSession {
  /** A full, blocking garbage collection in the process (HeapProfiler.collectGarbage). */
  collectGarbage(): Promise<void>;
  /** `expression`'s value, evaluated in the process's main context and returned as JSON. */
  evaluate<T>(expression: string): Promise<T>;
  close(): void;
}

export function inspectorAddressIn(output: string): string | undefined {
  return LISTENING.exec(output)?.[1];
}

export async function openInspectorSession(address: string): Promise<InspectorSession> {
  const socket = new WebSocket(address);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error(`no inspector at ${address}`)), { once: true });
  });
  let nextId = 1;
  const pending = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as {
      id?: number;
      result?: unknown;
      error?: { message: string };
    };
    const waiting = message.id === undefined ? undefined : pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id!);
    if (message.error) waiting.reject(new Error(message.error.message));
    else waiting.resolve(message.result);
  });
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });
  return {
    async collectGarbage() {
      await send('HeapProfiler.collectGarbage');
    },
    async evaluate<T>(expression: string) {
      const result = (await send('Runtime.evaluate', { expression, returnByValue: true })) as {
        result: { value: string };
        exceptionDetails?: unknown;
      };
      if (result.exceptionDetails) throw new Error(`${expression} threw in the inspected process`);
      return JSON.parse(result.result.value) as T;
    },
    close() {
      socket.close();
    },
  };
}
