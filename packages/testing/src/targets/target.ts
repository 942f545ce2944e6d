import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A web-standard handler: `receiver.handle`, a Next App Router `POST`, a worker's `fetch`. */
export type FetchHandler = (request: Request) => Response | Promise<Response>;

/** A Node listener: an Express app, `toNodeListener(receiver)`, a Next Pages Router handler. */
export type NodeListener = (req: IncomingMessage, res: ServerResponse) => unknown;

/** Anything with a web `fetch` method: a Hono app, a `{ fetch }` module, the reference service. */
export interface FetchApp {
  fetch(request: Request, ...rest: never[]): Response | Promise<Response>;
}

/** A Fastify instance (4 or 5): driven through its `inject`, so no port is opened. */
export interface InjectApp {
  inject: (...args: never[]) => unknown;
  register: (...args: never[]) => unknown;
}

/** A payhook receiver (`createReceiver(…)`): driven through `receiver.handle`, in process. */
export interface HandleApp {
  handle(request: Request): Promise<Response>;
}

/** A Next App Router route module (`export const { POST } = payhookNext(receiver)`). */
export interface RouteModule {
  POST: FetchHandler;
}

/**
 * Where a delivery goes:
 * - a URL string or `URL`: real HTTP to exactly that URL;
 * - a Node `(req, res)` listener or an Express app: served on 127.0.0.1, port 0, with node:http;
 * - a Fastify instance: through `app.inject` (awaits `ready()` itself);
 * - a Hono app or any object with `fetch(request)`: called in process;
 * - a payhook receiver: `receiver.handle`, in process;
 * - a Next route module `{ POST }`, or a fetch handler `(request) => Response`: called in process;
 * - a `node:http` `Server`: its address, listening on 127.0.0.1:0 first if it is not listening.
 *
 * A plain function with one parameter is taken as a fetch handler, one with two or more (or an
 * Express app) as a Node listener.
 */
export type DeliveryTarget = string | URL | FetchHandler | NodeListener | FetchApp | InjectApp | HandleApp | RouteModule | http.Server;

export interface TargetOptions {
  /** The webhook route on an app. Default `/webhooks`. Ignored for a URL target, which is the route itself. */
  path?: string;
}

export interface Outgoing {
  method: string;
  /** Undefined: the webhook route. Otherwise a path such as `/orders/order-1`. */
  path?: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  signal?: AbortSignal;
}

/** A target made ready to send to; `close` frees what was opened for it (a port). */
export interface ResolvedTarget {
  kind: 'url' | 'node' | 'server' | 'inject' | 'fetch';
  /** The origin when the target is reached over HTTP. */
  origin?: string;
  send(outgoing: Outgoing): Promise<Response>;
  close(): Promise<void>;
}

const NULL_BODY = new Set([101, 103, 204, 205, 304]);

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function'
  );
}

const fn = (value: unknown, name: string) =>
  (typeof value === 'object' || typeof value === 'function') &&
  value !== null &&
  typeof (value as Record<string, unknown>)[name] === 'function';

function overHttp(kind: 'url' | 'node' | 'server', base: URL, webhookPath: string | undefined, close: () => Promise<void>): ResolvedTarget {
  return {
    kind,
    origin: base.origin,
    async send({ method, path, headers, body, signal }) {
      const url = path === undefined ? (webhookPath === undefined ? base : new URL(webhookPath, base)) : new URL(path, base);
      return fetch(url, { method, headers, body: body as BodyInit | undefined, redirect: 'manual', signal });
    },
    close,
  };
}

async function listenOnFreePort(server: http.Server): Promise<URL> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * Make a target ready to send to. See `DeliveryTarget` for what is accepted and how each is reached.
 * Internal to deliver, connect and the reference service's relay.
 */
export async function resolveTarget(target: DeliveryTarget, options: TargetOptions = {}): Promise<ResolvedTarget> {
  const webhookPath = options.path ?? '/webhooks';
  if (!webhookPath.startsWith('/')) {
    throw new TypeError(`[@payhook/testing] path must start with "/" (e.g. "/webhooks"); got "${webhookPath}".`);
  }
  if (typeof target === 'string' || target instanceof URL) {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      throw new TypeError(
        `[@payhook/testing] the target "${String(target)}" is not an absolute URL; pass e.g. "http://127.0.0.1:3000/webhooks", or the app itself.`,
      );
    }
    return overHttp('url', url, undefined, async () => {});
  }
  if (fn(target, 'inject') && fn(target, 'register')) {
    const app = target as unknown as {
      inject(o: { method: string; url: string; headers: Record<string, string>; payload?: Buffer }): Promise<{
        statusCode: number;
        headers: Record<string, string | string[] | number | undefined>;
        rawPayload: Buffer;
      }>;
    };
    return {
      kind: 'inject',
      async send({ method, path, headers, body }) {
        const payload = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? Buffer.from(body) : body);
        const res = await app.inject({ method, url: path ?? webhookPath, headers, payload });
        const out = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value === undefined) continue;
          for (const v of Array.isArray(value) ? value : [value]) out.append(name, String(v));
        }
        return new Response(NULL_BODY.has(res.statusCode) ? null : new Uint8Array(res.rawPayload), {
          status: res.statusCode,
          headers: out,
        });
      },
      close: async () => {},
    };
  }
  // A Fastify instance is thenable too (`await app` waits for its plugins), so it is recognised first.
  if (isThenable(target)) {
    throw new TypeError('[@payhook/testing] the target is a Promise: await it first (e.g. `const app = await createApp(shop)`).');
  }
  // A receiver has `handle` and `onAny`; Express has `handle` and `use`.
  if (typeof target === 'object' && fn(target, 'handle') && fn(target, 'onAny')) {
    return inProcess((request) => (target as HandleApp).handle(request), webhookPath);
  }
  if (fn(target, 'fetch') || fn(target, 'POST')) {
    const handler: FetchHandler = fn(target, 'fetch')
      ? (request) => (target as FetchApp).fetch(request)
      : (request) => (target as unknown as Record<string, FetchHandler>)[request.method]?.(request) ?? new Response(null, { status: 405 });
    return inProcess(handler, webhookPath);
  }
  if (target instanceof http.Server || (fn(target, 'listen') && fn(target, 'address') && typeof target !== 'function')) {
    const server = target as http.Server;
    const address = server.address();
    if (address && typeof address === 'object') {
      const host = address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address;
      const shown = host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host;
      return overHttp('server', new URL(`http://${shown}:${address.port}`), webhookPath, async () => {});
    }
    const base = await listenOnFreePort(server);
    return overHttp('server', base, webhookPath, () => closeServer(server));
  }
  if (typeof target === 'function') {
    const express = fn(target, 'handle') && fn(target, 'use');
    if (express || target.length >= 2) {
      const server = http.createServer(target as NodeListener);
      const base = await listenOnFreePort(server);
      return overHttp('node', base, webhookPath, () => closeServer(server));
    }
    return inProcess(target as FetchHandler, webhookPath);
  }
  throw new TypeError(
    '[@payhook/testing] unknown target: pass a URL, a fetch handler (request) => Response, a Node (req, res) listener or Express app, ' +
      'a Fastify instance, a Hono app, a payhook receiver, a Next route module { POST }, or a node:http Server.',
  );
}

function inProcess(handler: FetchHandler, webhookPath: string): ResolvedTarget {
  return {
    kind: 'fetch',
    async send({ method, path, headers, body, signal }) {
      const request = new Request(new URL(path ?? webhookPath, 'http://127.0.0.1'), {
        method,
        headers,
        body: body as BodyInit | undefined,
        signal,
      });
      const response = await handler(request);
      if (!(response instanceof Response)) {
        throw new TypeError(
          '[@payhook/testing] the fetch handler did not return a Response; return one (e.g. `receiver.handle(request)`).',
        );
      }
      return response;
    },
    close: async () => {},
  };
}

export interface Connection {
  /** The origin, when the app is reached over HTTP (a URL, a Node listener, a Server); undefined in process. */
  readonly url: string | undefined;
  /** Send a request to `path` on the app (`/orders/order-1`), however the app is reached. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
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
