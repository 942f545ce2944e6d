import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Case } from './cases.js';
import type { Answer } from './oracle.js';

/**
 * How the receiver fuzz (test/security/fuzz/) sends a case: as a fetch Request in process, over a
 * kept-alive node:http connection, or as raw bytes on a fresh socket.
 */

/** In process: a web Request (core, Hono, Next App Router). Headers join a repeated name with ", ", as HTTP does. */
export function toRequest(c: Case): Request {
  const headers = new Headers();
  for (const [n, v] of c.headers) headers.append(n, v);
  const method = c.method.toUpperCase();
  return new Request('http://127.0.0.1/webhooks', { method, headers, body: method === 'GET' ? undefined : new Uint8Array(c.body) });
}

export const fromResponse = async (res: Response): Promise<Answer> => ({ status: res.status, text: await res.text() });

/** A live server on 127.0.0.1:0; `agent` keeps connections alive across cases. */
export async function serve(server: http.Server): Promise<{ port: number; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** Over a kept-alive connection with node:http (a repeated header goes out as separate lines). */
export function viaAgent(port: number, c: Case): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = {};
    for (const [n, v] of c.headers) {
      const key = n.toLowerCase();
      const had = headers[key];
      headers[key] = had === undefined ? v : [...(Array.isArray(had) ? had : [had]), v];
    }
    // node:http frames a GET or DELETE body only when told its length; unframed, the bytes would read as a next request.
    headers['content-length'] = String(c.body.length);
    const req = http.request(
      { host: '127.0.0.1', port, path: '/webhooks', method: c.method.toUpperCase(), headers, agent: keepAlive },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(parts).toString() }));
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) =>
      e.code === 'ECONNRESET' || e.code === 'EPIPE' ? resolve({ status: null, text: '' }) : reject(e),
    );
    req.end(c.body);
  });
}

/**
 * One raw HTTP/1.1 exchange on a fresh socket: header names exactly as given (upper-case,
 * repeated), the body chunked at `c.chunks` or with a lying Content-Length.
 */
export function viaSocket(port: number, c: Case, timeoutMs = 5_000): Promise<Answer> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(received).toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      const split = text.indexOf('\r\n\r\n');
      let rest = split < 0 ? '' : text.slice(split + 4);
      if (/\r\ntransfer-encoding: chunked/i.test(text.slice(0, split))) rest = dechunk(rest);
      resolve({ status: m ? Number(m[1]) : null, text: rest });
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('data', (d: Buffer) => received.push(d));
    socket.on('close', finish);
    socket.on('error', () => {});
    const chunked = c.chunks.length > 0 && c.lie === 'none';
    const length = c.lie === 'short' ? Math.max(0, c.body.length - 5) : c.lie === 'long' ? c.body.length + 50 : c.body.length;
    const head = [
      `${c.method.toUpperCase()} /webhooks HTTP/1.1`,
      'Host: 127.0.0.1',
      'Connection: close',
      ...c.headers.map(([n, v]) => `${n}: ${v}`),
    ];
    head.push(chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`);
    const pieces: Buffer[] = [Buffer.from(`${head.join('\r\n')}\r\n\r\n`)];
    if (chunked) {
      let at = 0;
      for (const cut of [...c.chunks, c.body.length]) {
        if (cut <= at) continue;
        const part = c.body.subarray(at, cut);
        pieces.push(Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]));
        at = cut;
      }
      pieces.push(Buffer.from('0\r\n\r\n'));
    } else {
      pieces.push(c.body);
    }
    let i = 0;
    const next = () => {
      if (done || socket.destroyed) return;
      if (i === pieces.length) {
        // A longer declared length than sent: the client gives up sending; the server must not wait forever.
        if (c.lie === 'long') socket.end();
        return;
      }
      socket.write(pieces[i++]!, () => setImmediate(next));
    };
    socket.once('connect', next);
  });
}

/** A chunked response body, decoded. */
function dechunk(text: string): string {
  let out = '';
  for (let at = 0; ; ) {
    const eol = text.indexOf('\r\n', at);
    const size = parseInt(text.slice(at, eol), 16);
    if (!(size > 0)) return out;
    out += text.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}
