import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Shop } from './index.js';

/**
 * Server timeouts for an endpoint on the public internet: a client that trickles its headers or
 * body is cut off well before it can tie a connection up for long, and an honest delivery (the
 * service waits 10 s for an answer) always fits.
 */
export const SERVER_TIMEOUTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  keepAliveTimeoutMs: 5_000,
  // Node checks the two timeouts above only this often (default 30 s, which let a trickling client hold a socket for up to 40 s).
  checkIntervalMs: 1_000,
} as const;

/** Where the examples listen: `PORT` (default 3000) on `HOST` (default 127.0.0.1). */
export const address = (env: NodeJS.ProcessEnv = process.env) => ({
  port: Number(env.PORT ?? 3000),
  host: env.HOST ?? '127.0.0.1',
});

/** Serve a Node listener with the timeouts above, say where, and stop cleanly on SIGINT/SIGTERM. */
export function serve(name: string, listener: (req: IncomingMessage, res: ServerResponse) => void, shop: Shop): http.Server {
  const server = http.createServer({ connectionsCheckingInterval: SERVER_TIMEOUTS.checkIntervalMs }, listener);
  server.headersTimeout = SERVER_TIMEOUTS.headersTimeoutMs;
  server.requestTimeout = SERVER_TIMEOUTS.requestTimeoutMs;
  server.keepAliveTimeout = SERVER_TIMEOUTS.keepAliveTimeoutMs;
  const { port, host } = address();
  server.listen(port, host, () => {
    const bound = server.address();
    announce(name, typeof bound === 'object' && bound ? bound.port : port, host);
  });
  stopOnSignal(() => new Promise<void>((r) => server.close(() => r())), shop);
  return server;
}

export function announce(name: string, port: number, host: string): void {
  console.log(`[shop:${name}] listening on http://${host}:${port}`);
}

export function stopOnSignal(close: () => Promise<void>, shop: Shop): void {
  const stop = async () => {
    await close();
    await shop.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
