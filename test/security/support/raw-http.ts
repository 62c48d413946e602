// HTTP/1.1 requests written byte by byte on a socket: what a fuzzer needs and Node's client refuses to send
// (invalid UTF-8 in the request target, raw bytes in header values, bodies that lie about their type,
// headers far past the server's limit). The answer is read until the server closes the connection.
import net from 'node:net';

export interface RawRequestSpec {
  method: string;
  /** The request target exactly as sent (bytes, not a URL object). */
  target: Buffer;
  headers: [string, Buffer][];
  body?: Buffer;
}

export interface RawAnswer {
  /** 0 when the server closed the connection without a status line. */
  status: number;
  head: string;
  body: Buffer;
}

export function sendRaw(port: number, spec: RawRequestSpec, timeoutMs = 10_000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(`no answer within ${timeoutMs} ms to ${spec.method} ${spec.target.toString('latin1')}`),
      );
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // A reset after the server has answered (it closes on a request it will not read) still gives its answer.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const head = (split < 0 ? all : all.subarray(0, split)).toString('latin1');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1];
      resolve({
        status: status ? Number(status) : 0,
        head,
        body: split < 0 ? Buffer.alloc(0) : all.subarray(split + 4),
      });
    });
    socket.on('connect', () => {
      const lines = [
        Buffer.from(`${spec.method} `, 'latin1'),
        spec.target,
        Buffer.from(' HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n', 'latin1'),
      ];
      for (const [name, value] of spec.headers) {
        lines.push(Buffer.from(`${name}: `, 'latin1'), value, Buffer.from('\r\n', 'latin1'));
      }
      if (spec.body !== undefined)
        lines.push(Buffer.from(`content-length: ${spec.body.length}\r\n`, 'latin1'));
      lines.push(Buffer.from('\r\n', 'latin1'));
      if (spec.body !== undefined) lines.push(spec.body);
      // write, not end: a half-closed request socket reads to some servers (and to @fastify/static) as an
      // aborted request. `connection: close` makes the server close once it has answered.
      socket.write(Buffer.concat(lines));
    });
  });
}
