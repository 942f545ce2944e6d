import { resolveTarget } from './resolve-target.js';
import type { DeliveryTarget, TargetOptions } from './target.js';

/** An app as `connect` reaches it: its origin, a `fetch` to its routes, and `close`. */
export interface Connection {
  /** The origin, when the app is reached over HTTP (a URL, a Node listener, a Server); undefined in process. */
  readonly url: string | undefined;
  /** Send a request to `path` on the app (`/orders/order-1`), however the app is reached. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Stop what `connect` opened (a server it started for the app); a server already listening stays up. */
  close(): Promise<void>;
  /** `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Reach any app the way `deliver` does (Express on a free port, Fastify through `inject`, Hono in
 * process…) to call its other routes, e.g. to read an order back after a delivery.
 *
 * @example
 * const app = await connect(createApp(shop));
 * try {
 *   const order = await (await app.fetch('/orders/order-1001')).json();
 * } finally {
 *   await app.close(); // or `await using app = …` where the toolchain supports it (not Node 20)
 * }
 */
export async function connect(target: DeliveryTarget, options: TargetOptions = {}): Promise<Connection> {
  const resolved = await resolveTarget(target, options);
  const close = () => resolved.close();
  return {
    url: resolved.origin,
    async fetch(path, init = {}) {
      if (typeof path !== 'string' || !path.startsWith('/')) {
        throw new TypeError(`[@payhook/testing] connection.fetch takes a path starting with "/" (e.g. "/orders/1"); got ${String(path)}.`);
      }
      // Let Request normalise the init (a JSON string, a Headers object, a FormData…) into bytes and headers.
      const request = new Request(new URL(path, 'http://127.0.0.1'), init);
      const headers: Record<string, string> = {};
      request.headers.forEach((value, name) => {
        headers[name] = value;
      });
      const body = request.body ? new Uint8Array(await request.arrayBuffer()) : undefined;
      return resolved.send({ method: request.method, path, headers, body, signal: init.signal ?? undefined });
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
