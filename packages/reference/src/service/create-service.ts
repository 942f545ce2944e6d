import { signatureHeaderName, type TransactionRecord } from '@payhook/core';
import { callbackUrlProblem } from './callback-url.js';
import { createClock, type Clock, type ClockMode } from './clock.js';
import type { ServiceContext } from './context.js';
import { createCursorCodec } from './cursor.js';
import type { Delivery, DeliveryAttempt, DeliveryFilter } from './delivery-record.js';
import { createDispatcher } from './dispatcher.js';
import { createFaults } from './faults.js';
import { ApiError, failure } from './http.js';
import { createIdempotencyStore } from './idempotency.js';
import {
  createMerchantRegistry,
  DEFAULT_MERCHANT,
  generateApiKey,
  generateWebhookSecret,
  isLoopback,
  normalizeAddress,
  type MerchantConfig,
  type MerchantRegistry,
} from './merchants.js';
import { checkoutRoutes } from './pages/checkout.js';
import { dashboardRoutes } from './pages/dashboard.js';
import { pageGuard, parsePageHost, publicUrlHost, type Listener } from './pages/page-guard.js';
import { createRateLimiter } from './rate-limit.js';
import { deliveryRoutes } from './routes/deliveries.js';
import { createRouter, type RouteRequest } from './router.js';
import { providerRoutes } from './routes/providers.js';
import { sandboxRoutes } from './routes/sandbox.js';
import { transactionRoutes } from './routes/transactions.js';
import { listen, type ListenOptions, type RunningServer } from './server.js';
import { createTransactionStore, toRecord, type Transaction } from './transactions.js';
import { applyTransition } from './transitions.js';

export interface ReferenceServiceOptions {
  /** Merchant accounts. Default: one merchant with a generated sandbox key and webhook secret (see `generated`). */
  merchants?: MerchantConfig[];
  /** `real` (default): wall time plus whatever was advanced. `manual`: time moves only when advanced (tests). */
  clock?: ClockMode | Clock;
  /** Allow plain-http callback URLs to loopback hosts (development only). Default false. */
  allowHttpCallbacks?: boolean;
  /**
   * The header webhooks are signed in. Default `X-Service-Signature`, the interface's; `X-Epay-Signature`
   * sends them as the real service, ePay, does.
   */
  signatureHeader?: string;
  /** Origin for checkout URLs, e.g. `https://pay.example.test`. Default: the origin each request came to. Its host may open the pages. */
  publicUrl?: string;
  /** More Host names (`name`: any port, or `name:port`) the pages answer to, besides IP addresses, localhost and the host of `publicUrl`; others get a 403. */
  pageHosts?: string[];
  /** HMAC key of list cursors. Default: random per service. */
  cursorSecret?: string;
  /** Default 15 minutes. */
  cursorLifetimeMs?: number;
  /** Default 24 hours. */
  idempotencyWindowMs?: number;
  /** Default 100 requests per 60 seconds per key. */
  rateLimit?: { limit?: number; windowMs?: number };
  /** Called with unexpected errors (a 500, a delivery bug). Default: `console.error`. */
  onError?: (error: unknown) => void;
  /** Called once each delivery attempt is recorded (the CLI's live log). */
  onDeliveryAttempt?: (delivery: Delivery, attempt: DeliveryAttempt) => void;
  /** Called after anything `snapshot()` holds changed: a transaction made or moved, a delivery recorded or attempted. */
  onChange?: () => void;
  /** Start from a state saved earlier with `snapshot()` (the CLI's `--state` file). */
  state?: ReferenceState;
}

/** The transactions and deliveries of a service, as plain JSON-able data (`serve --state`). */
export interface ReferenceState {
  transactions: Transaction[];
  deliveries: Delivery[];
}

export interface ReferenceService {
  /**
   * The whole service as one web-standard handler. `remoteAddress` is the client address the IP
   * whitelist checks; in-process calls without it count as 127.0.0.1. `listener` is the address
   * `listen` bound: the pages then answer on its port only.
   */
  fetch(request: Request, info?: { remoteAddress?: string; listener?: Listener }): Promise<Response>;
  /** The service's clock: `advance(ms)` runs the retry schedule, rate limit, cursor and idempotency windows. */
  readonly clock: Clock;
  /** Merchant accounts; `revokeKey` revokes an API key. */
  readonly merchants: MerchantRegistry;
  /** Credentials generated when no merchants were given, else null. */
  readonly generated: { apiKey: string; webhookSecret: string } | null;
  /** Every delivery and its attempts, oldest first. */
  deliveries(filter?: DeliveryFilter): Delivery[];
  /** Every transaction, newest first. */
  transactions(): TransactionRecord[];
  /** The transactions and deliveries as they are kept, for `state` of a later service (live objects: serialize at once). */
  snapshot(): ReferenceState;
  /** Serve over HTTP (node:http). */
  listen(options?: ListenOptions): Promise<RunningServer>;
  /** Stop the clock's timers; scheduled retries never run. */
  close(): void;
}

/**
 * Create the reference payment service: the API of section 4, sandbox control, checkout page and
 * dashboard, in process.
 *
 * @example
 * const service = createReferenceService({ clock: 'manual', allowHttpCallbacks: true });
 * const { apiKey } = service.generated!;
 * const res = await service.fetch(new Request('http://localhost/v1/transactions', {
 *   headers: { authorization: `Bearer ${apiKey}` },
 * }));
 */
export function createReferenceService(options: ReferenceServiceOptions = {}): ReferenceService {
  const allowHttpCallbacks = options.allowHttpCallbacks ?? false;
  let generated: ReferenceService['generated'] = null;
  let configs = options.merchants;
  if (!configs || configs.length === 0) {
    generated = { apiKey: generateApiKey('sandbox'), webhookSecret: generateWebhookSecret() };
    configs = [{ ...DEFAULT_MERCHANT, apiKeys: [{ key: generated.apiKey }], webhookSecret: generated.webhookSecret }];
  }
  for (const m of configs) {
    const problem = m.callbackUrl === undefined ? null : callbackUrlProblem(m.callbackUrl, allowHttpCallbacks);
    if (problem) throw new TypeError(`[@payhook/reference] merchant ${m.id ?? ''} callbackUrl: ${problem}`);
  }
  const pageHosts = [
    ...(options.pageHosts ?? []).map(parsePageHost),
    ...(options.publicUrl === undefined ? [] : [publicUrlHost(options.publicUrl)]),
  ];
  const merchants = createMerchantRegistry(configs);
  const clock = typeof options.clock === 'object' ? options.clock : createClock({ mode: options.clock ?? 'real' });
  const now = () => clock.now();
  const onError = options.onError ?? ((error: unknown) => console.error('[@payhook/reference]', error));
  const rate = { limit: options.rateLimit?.limit ?? 100, windowMs: options.rateLimit?.windowMs ?? 60_000 };
  const faults = createFaults();
  // Read out of `options` here: a closure over `options` would keep the merchants' plain API keys alive.
  const onChange = options.onChange;
  const changed = () => {
    try {
      onChange?.();
    } catch (error) {
      onError(error);
    }
  };
  const signatureHeader = headerOption(options.signatureHeader);
  const dispatcher = createDispatcher({
    clock,
    faults,
    allowHttpCallbacks,
    signatureHeader,
    onError,
    onAttempt: options.onDeliveryAttempt,
    onChange: changed,
  });
  const store = createTransactionStore(options.state?.transactions);
  if (options.state) dispatcher.restore(options.state.deliveries);

  const ctx: ServiceContext = {
    clock,
    merchants,
    transactions: {
      ...store,
      create(input, checkoutUrl) {
        const tx = store.create(input, checkoutUrl);
        changed();
        return tx;
      },
    },
    dispatcher,
    faults,
    idempotency: createIdempotencyStore({ windowMs: options.idempotencyWindowMs, now }),
    cursors: createCursorCodec({ secret: options.cursorSecret, lifetimeMs: options.cursorLifetimeMs, now }),
    limiter: createRateLimiter({ ...rate, now }),
    allowHttpCallbacks,
    publicUrl: options.publicUrl?.replace(/\/+$/, ''),
    pageHosts,
    // Passes `details` through whole: the checkout page's error codes (INVALID_OTP, …) reach the timeline.
    move(tx, action, details) {
      const moved = applyTransition(tx, action, clock.now(), details);
      if (!moved.ok) return moved;
      const merchant = merchants.get(tx.merchantId);
      if (moved.event && merchant) dispatcher.send(merchant, tx, moved.event);
      changed();
      return { ok: true };
    },
  };

  const route = createRouter([
    ...transactionRoutes,
    ...providerRoutes,
    ...sandboxRoutes,
    ...deliveryRoutes,
    ...checkoutRoutes,
    ...dashboardRoutes,
  ]);

  async function handle(request: Request, remoteAddress: string, listener: Listener | undefined): Promise<Response> {
    const url = new URL(request.url);
    const match = route(request.method, url.pathname);
    if (match.kind === 'not-found') {
      const version = /^\/(v\d+)(?:\/|$)/.exec(url.pathname)?.[1];
      if (version && version !== 'v1') throw new ApiError(404, `Unknown API version ${version}: this service speaks /v1.`);
      throw new ApiError(
        404,
        `No route for ${request.method} ${url.pathname}: see the endpoints under /v1/transactions and /v1/payment-providers.`,
      );
    }
    if (match.kind === 'method-not-allowed') {
      throw new ApiError(405, `${request.method} is not allowed on ${url.pathname}: use ${match.allow.join(' or ')}.`, {
        allow: match.allow.join(', '),
      });
    }
    const { route: r, params } = match;
    const req = { request, url, params, remoteAddress, listener, ctx } as RouteRequest;
    if (r.access === 'local' && !isLoopback(remoteAddress)) {
      throw new ApiError(403, 'The dashboard is served to loopback clients only: open it on the machine that runs the service.');
    }
    if (r.access === 'local' || r.access === 'public') {
      const refused = pageGuard(req);
      if (refused) return refused;
    }
    if (r.access === 'api' || r.access === 'sandbox') {
      const auth = merchants.authenticate(request.headers.get('authorization'));
      if (!auth.ok) throw new ApiError(401, auth.message, { 'www-authenticate': 'Bearer' });
      if (!auth.merchant.allows(remoteAddress)) {
        throw new ApiError(
          403,
          `Requests from ${remoteAddress} are not allowed for this account: add the address to the merchant's IP whitelist.`,
        );
      }
      if (r.access === 'sandbox' && auth.mode !== 'sandbox') {
        throw new ApiError(403, 'Sandbox control needs a sandbox key (sk_test_…); live transactions cannot be moved by hand.');
      }
      if (r.access === 'api') {
        const hit = ctx.limiter.hit(auth.keyHash);
        if (!hit.ok) {
          throw new ApiError(
            429,
            `Rate limit exceeded: ${rate.limit} requests per ${rate.windowMs / 1000} seconds per API key. Retry after ${hit.retryAfterSeconds} s and back off exponentially.`,
            { 'retry-after': String(hit.retryAfterSeconds) },
          );
        }
      }
      if (r.permission && !auth.permissions.has(r.permission)) {
        // "Missing <permission> permission", as the service words it (go-sdk client_test.go TestAMissingPermissionIsPermissionDenied).
        throw new ApiError(403, `Missing ${r.permission} permission: use an API key that holds it.`);
      }
      req.caller = auth;
    }
    return r.handle(req);
  }

  const service: ReferenceService = {
    async fetch(request, info) {
      const remoteAddress = normalizeAddress(info?.remoteAddress ?? '127.0.0.1');
      try {
        return await handle(request, remoteAddress, info?.listener);
      } catch (error) {
        if (error instanceof ApiError) return failure(error.status, error.message, error.headers);
        onError(error);
        return failure(500, 'Internal error in the reference service: see its log, and report it if it repeats.');
      }
    },
    clock,
    merchants,
    get generated() {
      return generated;
    },
    deliveries: (filter) => dispatcher.list(filter),
    transactions: () => ctx.transactions.all().map(toRecord),
    snapshot: () => ({ transactions: ctx.transactions.all().reverse(), deliveries: dispatcher.list() }),
    listen: (opts) => listen(service, opts),
    close: () => clock.close(),
  };
  return service;
}

/** The `signatureHeader` option, lower case; a value that is not a header name is the caller's mistake, named as ours. */
function headerOption(name: unknown): string {
  try {
    return signatureHeaderName(name);
  } catch (error) {
    throw new TypeError((error as Error).message.replace('[@payhook/core]', '[@payhook/reference]'));
  }
}
