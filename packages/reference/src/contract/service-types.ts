// The service's public shape: what it takes, what it is, and the state it saves (read by the state file too).
import type { TransactionRecord } from '@payhook/core';
import type { Delivery, DeliveryAttempt, DeliveryFilter } from '../delivery/delivery-record.js';
import type { MerchantConfig, MerchantRegistry } from '../domain/merchants.js';
import type { Transaction } from '../domain/transactions.js';
import type { ListenOptions, RunningServer } from '../http/server.js';
import type { ClockMode, ServiceClock } from '../domain/clock.js';
import type { Listener } from './context.js';

/** What `createReferenceService` takes; every field has a default. */
export interface ReferenceServiceOptions {
  /** Merchant accounts. Default: one merchant with a generated sandbox key and webhook secret (see `generated`). */
  merchants?: MerchantConfig[];
  /** `real` (default): wall time plus whatever was advanced. `manual`: time moves only when advanced (tests). */
  clock?: ClockMode | ServiceClock;
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

/** The reference service, as `createReferenceService` makes it: a web-standard handler, its clock, merchants and records. */
export interface ReferenceService {
  /**
   * The whole service as one web-standard handler. `remoteAddress` is the client address the IP
   * whitelist checks; in-process calls without it count as 127.0.0.1. `listener` is the address
   * `listen` bound: the pages then answer on its port only.
   */
  fetch(request: Request, info?: { remoteAddress?: string; listener?: Listener }): Promise<Response>;
  /** The service's clock: `advance(ms)` runs the retry schedule, rate limit, cursor and idempotency windows. */
  readonly clock: ServiceClock;
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
