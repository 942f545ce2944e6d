// The types every route, page and the router share, in one module that imports types only: the
// router, the page guard and the handlers all read them, and nothing here reads those back.
import type { CursorCodec } from '../domain/cursor.js';
import type { IdempotencyStore } from '../domain/idempotency.js';
import type { Authentication, MerchantRegistry, Permission } from '../domain/merchants.js';
import type { Transaction, TransactionStore } from '../domain/transactions.js';
import type { Action, TransitionDetails } from '../domain/transitions.js';
import type { Dispatcher } from '../delivery/dispatcher.js';
import type { Faults } from '../delivery/faults.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { ServiceClock } from '../domain/clock.js';

/** A host name the pages answer to; `port` undefined: on any port ('' is the scheme's default). */
export interface PageHost {
  hostname: string;
  port: string | undefined;
}

/** The address a server listens on (`listen` passes it with each request). */
export interface Listener {
  host: string;
  port: number;
}

/** Everything a route handler can reach: one service's state and settings. */
export interface ServiceContext {
  clock: ServiceClock;
  merchants: MerchantRegistry;
  transactions: TransactionStore;
  dispatcher: Dispatcher;
  faults: Faults;
  idempotency: IdempotencyStore;
  cursors: CursorCodec;
  limiter: RateLimiter;
  allowHttpCallbacks: boolean;
  /** Origin used in checkout URLs; default: the origin the request came to. */
  publicUrl: string | undefined;
  /** Host names the pages answer to besides the loopback names and the listen address: `pageHosts` and the host of `publicUrl`. */
  pageHosts: readonly PageHost[];
  /** Move a transaction and send the event the move emits; `details` (error code and message too) go on the timeline. */
  move(tx: Transaction, action: Action, details?: TransitionDetails): { ok: true } | { ok: false; message: string };
}

/**
 * Who may call a route: `api` (a key, the whitelist, the rate limit and `permission`),
 * `sandbox` (a sandbox key and the whitelist), `public` (anyone: the checkout page),
 * `local` (loopback clients only: the dashboard). `public` and `local` routes are pages: they
 * answer only to the host names the service was started for, and take forms from themselves only
 * (`pageGuard`).
 */
export type Access = 'api' | 'sandbox' | 'public' | 'local';

export type Caller = Extract<Authentication, { ok: true }>;

export interface RouteRequest {
  request: Request;
  url: URL;
  params: Record<string, string>;
  remoteAddress: string;
  /** The address the server listens on, when served by `listen`. */
  listener?: Listener;
  ctx: ServiceContext;
  /** The authenticated key, on `api` and `sandbox` routes. */
  caller: Caller;
}

export interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  /** `/v1/transactions/:reference`; a `:name` segment matches one path segment. */
  path: string;
  access: Access;
  permission?: Permission;
  handle(req: RouteRequest): Promise<Response> | Response;
}
