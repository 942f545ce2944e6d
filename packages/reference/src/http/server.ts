import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toWebRequest, writeWebResponse } from './node-bridge.js';

/** Where `listen` serves: every field has a default. */
export interface ListenOptions {
  /** Default 4010; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
}

/** A service `listen` is serving. */
export interface RunningServer {
  /** `http://host:port`, with the real port when 0 was asked for. */
  url: string;
  /** The port it listens on. */
  port: number;
  /** The node:http server. */
  server: Server;
  /** Stop accepting connections, close open ones and stop the service's timers. */
  close(): Promise<void>;
}

interface Servable {
  fetch(request: Request, info?: { remoteAddress?: string; listener?: { host: string; port: number } }): Promise<Response>;
  close(): void;
}

/**
 * Serve a reference service over node:http. The IP whitelist sees the socket's address; the pages
 * answer to the names of `host` on the port bound (with `pageHosts` and `publicUrl`'s host).
 *
 * @example
 * const running = await listen(createReferenceService(), { port: 0 });
 * console.log(running.url);
 * await running.close();
 */
export async function listen(service: Servable, options: ListenOptions = {}): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  let origin = `http://${host}`;
  const listener = { host, port: options.port ?? 4010 };
  const server = createServer((req, res) => {
    let request: Request;
    try {
      request = toWebRequest(req, origin);
    } catch {
      // A Host header that is not a host name (`a b`) makes no URL.
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end('{"status":"error","data":{"message":"The Host header is not a host name."}}');
      return;
    }
    // An unknown address ('' once the socket is gone) is never whitelisted.
    service
      .fetch(request, { remoteAddress: req.socket.remoteAddress ?? '', listener })
      .then((response) => writeWebResponse(res, response))
      .catch(() => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"status":"error","data":{"message":"Internal error in the reference service."}}');
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 4010, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  listener.port = port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  origin = `http://${shownHost}:${port}`;
  return {
    url: origin,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        service.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
