import type { IncomingMessage, Server, ServerResponse } from 'node:http';

// What deliver, connect and the reference service's relay accept as a target, and what it is made into.

/** A web-standard handler: `receiver.handle`, a Next App Router `POST`, a worker's `fetch`. */
export type FetchHandler = (request: Request) => Response | Promise<Response>;

/** A Node listener: an Express app, `toNodeListener(receiver)`, a Next Pages Router handler. */
export type NodeListener = (req: IncomingMessage, res: ServerResponse) => unknown;

/** Anything with a web `fetch` method: a Hono app, a `{ fetch }` module, the reference service. */
export interface FetchApp {
  /** Answers a request. */
  fetch(request: Request, ...rest: never[]): Response | Promise<Response>;
}

/** A Fastify instance (4 or 5): driven through its `inject`, so no port is opened. */
export interface InjectApp {
  /** Fastify's `inject`: a request without a network. */
  inject: (...args: never[]) => unknown;
  /** Fastify's `register`: with `inject`, how a Fastify instance is told from other apps. */
  register: (...args: never[]) => unknown;
}

/** A payhook receiver (`createReceiver(…)`): driven through `receiver.handle`, in process. */
export interface HandleApp {
  /** The receiver's web-standard handler. */
  handle(request: Request): Promise<Response>;
}

/** A Next App Router route module (`export const { POST } = payhookNext(receiver)`). */
export interface RouteModule {
  /** The route's POST handler. */
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
export type DeliveryTarget = string | URL | FetchHandler | NodeListener | FetchApp | InjectApp | HandleApp | RouteModule | Server;

/** Where on an app target the webhook route is. */
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
