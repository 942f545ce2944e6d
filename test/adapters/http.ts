import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';

export interface Served {
  url: string;
  close(): Promise<void>;
}

export interface Sent {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  ms: number;
}

/**
 * One real HTTP request over a fresh socket. Header values may be lists (sent as separate lines);
 * a body given as chunks goes out chunked, without Content-Length.
 */
export function send(
  url: string,
  {
    method = 'POST',
    headers = {},
    body,
    chunks,
    timeoutMs = 5_000,
  }: {
    method?: string;
    headers?: Record<string, string | string[]>;
    body?: string;
    chunks?: Buffer[];
    timeoutMs?: number;
  } = {},
): Promise<Sent> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false, timeout: timeoutMs }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(parts).toString(), ms: performance.now() - started }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${method} ${url} within ${timeoutMs} ms`)));
    req.on('error', (e: NodeJS.ErrnoException) => {
      // A server that answers 413 may close while the upload is still going; the answer still counts.
      if (e.code !== 'EPIPE' && e.code !== 'ECONNRESET') reject(e);
    });
    if (!chunks) return req.end(body);
    let i = 0;
    const next = (): void => {
      if (req.destroyed) return;
      if (i === chunks.length) return void req.end();
      req.write(chunks[i++], () => setImmediate(next));
    };
    next();
  });
}

/** Listen on 127.0.0.1, port 0. */
export function listen(server: http.Server, path: string): Promise<Served> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      }),
    ),
  );
}

/** Serve a web-standard fetch handler (Hono's `app.fetch`) on a real Node socket. */
export function serveFetch(fetch: (request: Request) => Response | Promise<Response>, path: string): Promise<Served> {
  const server = http.createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const headers = new Headers();
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method,
      headers,
      body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined,
      duplex: 'half',
    } as RequestInit);
    const response = await fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  return listen(server, path);
}
