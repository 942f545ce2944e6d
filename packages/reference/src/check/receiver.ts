import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseRedacted } from './wire.js';

/** One request the service made to the callback URL. */
export interface Delivery {
  method: string;
  headers: IncomingHttpHeaders;
  /** The raw bytes, as signed. */
  body: Buffer;
  /** The parsed body, or undefined when it is not JSON. */
  json: unknown;
}

/** Where the service can send webhooks to this process. */
export interface Hooks {
  /** The callback URL given to initialize. */
  url: string;
  deliveries: Delivery[];
  /** The first delivery whose body has this `event` and `reference`, or null after `timeoutMs`. */
  wait(event: string, reference: string, timeoutMs: number): Promise<Delivery | null>;
  close(): Promise<void>;
}

/** Bodies over this are cut off and answered 413 (go-sdk webhooks.go reads at most 1 MiB too). */
const MAX_WEBHOOK_BODY = 1024 * 1024;
/**
 * At most this many requests are kept or being read (a run expects a handful): past it they are
 * answered 503 and dropped, so that whoever reaches a public --listen tunnel cannot grow the check's memory.
 */
export const MAX_KEPT_DELIVERIES = 100;

/**
 * Listen for webhooks on `host:port` (port 0 picks one) and answer every POST 200 at once.
 * `publicUrl` is the address the service reaches it at (a tunnel's); default `http://host:port/payhook-check`.
 * The parsed body and the headers are kept with `redact` applied (the raw bytes stay as signed).
 */
export async function listenForWebhooks(host: string, port: number, redact: (text: string) => string, publicUrl?: string): Promise<Hooks> {
  const deliveries: Delivery[] = [];
  const waiters = new Set<() => void>();
  let reading = 0;
  const server: Server = createServer((req, res) => {
    // Uploads still arriving count too: each may hold up to MAX_WEBHOOK_BODY.
    if (deliveries.length + reading >= MAX_KEPT_DELIVERIES) {
      res.writeHead(503, { connection: 'close' }).end();
      req.destroy();
      return;
    }
    reading++;
    req.once('close', () => reading--);
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_WEBHOOK_BODY) {
        res.writeHead(413).end();
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const json = parseRedacted(body.toString('utf8'), redact);
      const headers = Object.fromEntries(
        Object.entries(req.headers).map(([name, value]) => [name, Array.isArray(value) ? value.map(redact) : value && redact(value)]),
      );
      deliveries.push({ method: req.method ?? '', headers, body, json });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      for (const wake of waiters) wake();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 15_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const find = (event: string, reference: string) =>
    deliveries.find((d) => {
      const body = d.json as { event?: unknown; reference?: unknown } | undefined;
      return body?.event === event && body.reference === reference;
    }) ?? null;
  return {
    url: publicUrl ?? `http://${hostPart}:${address.port}/payhook-check`,
    deliveries,
    wait(event, reference, timeoutMs) {
      return new Promise((resolve) => {
        const check = () => {
          const found = find(event, reference);
          if (found) done(found);
        };
        const timer = setTimeout(() => done(find(event, reference)), timeoutMs);
        const done = (value: Delivery | null) => {
          clearTimeout(timer);
          waiters.delete(check);
          resolve(value);
        };
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
