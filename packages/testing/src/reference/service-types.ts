import type { Client } from '@payhook/client';
import type { InitializeInput, InitializeResult, TransactionRecord } from '@payhook/core/api';
import type {
  Action,
  Delivery,
  FaultInput,
  FaultRule,
  PAYMENT_METHODS,
  ReferenceService,
  ReferenceServiceOptions,
} from '@payhook/reference';
import type { DeliveryTarget, TargetOptions } from '../targets/target.js';

// What startReferenceService takes, and the handle it gives a test.

/** What `startReferenceService` takes; every field has a default. */
export interface StartReferenceServiceOptions {
  /** Where the service's webhooks go (any `DeliveryTarget`); can be set or changed later with `deliverTo`. */
  deliverTo?: DeliveryTarget;
  /** The webhook route on an app target. Default `/webhooks`. */
  path?: string;
  /** Serve the API over HTTP on 127.0.0.1, port 0 (default true). `false`: in process only; `url` is then a placeholder and `fetch`/`client` go straight to the service. */
  listen?: boolean;
  /** The sandbox API key. Default: generated. With `merchants`, give each account its own instead. */
  apiKey?: string;
  /** The webhook secret. Default: generated. With `merchants`, give each account its own instead. */
  webhookSecret?: string;
  /**
   * Several merchant accounts, as a platform serves (each its own key and secret), instead of the
   * one `test` merchant. The returned handle acts for the first; `account(id)` for any. Each
   * account's webhooks reach the target at `<path>/<id>` (`/webhooks/shop-a`), where a receiver
   * with `accounts` reads the account from the path's last segment, unless it has a `callbackUrl`.
   */
  merchants?: readonly TestMerchant[];
  /** Where the virtual clock starts. Default: now. */
  startAt?: Date | number;
  /**
   * The header the service signs its webhooks with: default `X-Service-Signature`, or
   * `X-Epay-Signature` as ePay sends them. Give your receiver, `signedRequest` and `deliver` the same.
   */
  signatureHeader?: string;
  /** Other options of `createReferenceService` (rate limit, idempotency window…). */
  service?: Omit<ReferenceServiceOptions, 'merchants' | 'clock' | 'allowHttpCallbacks'>;
}

/** One merchant account of `startReferenceService({ merchants })`. */
export interface TestMerchant {
  /** The account's name: 1 to 64 letters, digits, `_` or `-`, such as `shop-a`. */
  id: string;
  /** Shown on the checkout page. Default: the id. */
  name?: string;
  /** The account's sandbox API key. Default: generated. */
  apiKey?: string;
  /** The account's webhook secret. Default: generated. */
  webhookSecret?: string;
  /** The account's own (dashboard) callback URL. Default: the relay, reaching the target at `<path>/<id>`. */
  callbackUrl?: string;
}

/** How a sandbox move is made: the provider paid with, and whether to wait for its webhook's answer. */
export interface MoveOptions {
  /** The provider the customer paid (or failed) with, by its provider code (`telebirr`, `cbe_birr`…). Default `telebirr`. */
  paymentMethod?: (typeof PAYMENT_METHODS)[number];
  /** Wait until the first attempt of the delivery the move sent has been answered (default true). */
  settle?: boolean;
}

/**
 * A reference service started for a test, with its controls typed. It acts for one merchant
 * account (`accountId`): its key, secret and client, its transactions, deliveries and faults.
 * The service, clock, target and `close` are shared by every account.
 */
export interface TestReferenceService {
  /** The reference service itself (`@payhook/reference`), for what the handle does not cover. */
  readonly service: ReferenceService;
  /** The API's origin (`http://127.0.0.1:<port>`). */
  readonly url: string;
  /** The merchant account this handle acts for: `test`, or the id given in `merchants`. */
  readonly accountId: string;
  /** The account's sandbox API key (`sk_test_…`). */
  readonly apiKey: string;
  /** The account's webhook secret. */
  readonly webhookSecret: string;
  /**
   * The merchant's callback URL: a relay that forwards to `deliverTo`'s target (with `merchants`,
   * to `<path>/<id>` on it), or the `callbackUrl` the account was given.
   */
  readonly callbackUrl: string;
  /** `PAYHOOK_BASE_URL`, `PAYHOOK_API_KEY`, `PAYHOOK_WEBHOOK_SECRET`, for an app that reads its configuration from the environment. */
  readonly env: { PAYHOOK_BASE_URL: string; PAYHOOK_API_KEY: string; PAYHOOK_WEBHOOK_SECRET: string };
  /** A typed `@payhook/client` for the sandbox key. */
  readonly client: Client;
  /** The virtual clock (manual: it moves only when advanced). */
  readonly clock: ReferenceService['clock'];
  /** Send the service's webhooks to `target` from now on (any `DeliveryTarget`). */
  deliverTo(target: DeliveryTarget, options?: TargetOptions): Promise<void>;
  /** Initialize a sandbox transaction (defaults: 100.00 ETB, phone 0911234567, a new merchant reference). */
  createTransaction(input?: Partial<InitializeInput>): Promise<InitializeResult & { merchantReference: string }>;
  /** Move a transaction by a sandbox action; resolves with its record once the delivery's first attempt was answered. */
  move(reference: string, action: Action, options?: MoveOptions): Promise<TransactionRecord>;
  /** `move(reference, 'open')`: checkout opened (pending to processing); no webhook is sent. */
  open(reference: string, options?: MoveOptions): Promise<TransactionRecord>;
  /** `move(reference, 'pay')`: the payment completes (`payment.success`). */
  pay(reference: string, options?: MoveOptions): Promise<TransactionRecord>;
  /** `move(reference, 'fail')`: the payment attempt fails (`payment.failed`). */
  fail(reference: string, options?: MoveOptions): Promise<TransactionRecord>;
  /** `move(reference, 'cancel')`: the transaction is cancelled (`payment.cancelled`). */
  cancel(reference: string, options?: MoveOptions): Promise<TransactionRecord>;
  /** `move(reference, 'refund')`: a refund starts on a completed payment (`payment.refunding`). */
  refund(reference: string, options?: MoveOptions): Promise<TransactionRecord>;
  /** `move(reference, 'complete-refund')`: the refund completes (`payment.refunded`). */
  completeRefund(reference: string, options?: MoveOptions): Promise<TransactionRecord>;
  /** `move(reference, 'reverse')`: a completed payment is reversed (`payment.reversed`). */
  reverse(reference: string, options?: MoveOptions): Promise<TransactionRecord>;
  /** Add a sandbox fault rule (duplicate, drop, delay, reorder, fail); see docs/service-gaps.md. */
  addFault(fault: FaultInput): Promise<FaultRule>;
  /** The account's sandbox fault rules, with how many uses each has left. */
  faults(): Promise<FaultRule[]>;
  /** Remove every fault rule of the account's sandbox. */
  clearFaults(): Promise<void>;
  /** Move the virtual clock; due retries run, and it resolves once they were answered. */
  advance(ms: number): Promise<void>;
  /** Advance through the whole retry schedule (1 + 2 + 4 + 8 minutes, plus the last attempt's timeout). */
  runRetrySchedule(): Promise<void>;
  /** Every delivery of the account's sandbox (optionally of one transaction or event), oldest first, with its attempts. */
  deliveries(filter?: { reference?: string; event?: string }): Delivery[];
  /** A request to the service (in process), e.g. `ref.fetch('/_sandbox/clock')`; the sandbox key is sent unless `authorization` is given. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /**
   * The same controls acting for another account of `merchants`: its key, secret, client and
   * callback URL, its transactions, deliveries and faults. Throws for an id not started.
   */
  account(id: string): TestReferenceService;
  /** Stop the service, its server, the relay, and any port opened for the target. */
  close(): Promise<void>;
  /** `close()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}
