import { createClient, type Client } from '@payhook/client';
import type { InitializeInput, InitializeResult, TransactionRecord } from '@payhook/core/api';
import {
  createReferenceService,
  DELIVERY_TIMEOUT_MS,
  generateApiKey,
  generateWebhookSecret,
  RETRY_DELAYS_MS,
  type Action,
  type Clock,
  type Delivery,
  type FaultInput,
  type FaultRule,
  type PAYMENT_METHODS,
  type ReferenceService,
  type ReferenceServiceOptions,
  type RunningServer,
} from '@payhook/reference';
import { resolveTarget, type DeliveryTarget, type TargetOptions } from './target.js';
import { startWebhookRelay } from './webhook-relay.js';

export interface StartReferenceServiceOptions {
  /** Where the service's webhooks go (any `DeliveryTarget`); can be set or changed later with `deliverTo`. */
  deliverTo?: DeliveryTarget;
  /** The webhook route on an app target. Default `/webhooks`. */
  path?: string;
  /** Serve the API over HTTP on 127.0.0.1, port 0 (default true). `false`: in process only; `url` is then a placeholder and `fetch`/`client` go straight to the service. */
  listen?: boolean;
  /** The sandbox API key. Default: generated. */
  apiKey?: string;
  /** The webhook secret. Default: generated. */
  webhookSecret?: string;
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

export interface MoveOptions {
  /** The provider the customer paid (or failed) with, by its provider code (`telebirr`, `cbe_birr`…). Default `telebirr`. */
  paymentMethod?: (typeof PAYMENT_METHODS)[number];
  /** Wait until the first attempt of the delivery the move sent has been answered (default true). */
  settle?: boolean;
}

/** A reference service started for a test, with its controls typed. */
export interface TestReferenceService {
  readonly service: ReferenceService;
  /** The API's origin (`http://127.0.0.1:<port>`). */
  readonly url: string;
  readonly apiKey: string;
  readonly webhookSecret: string;
  /** The callback URL the service delivers to: a relay that forwards to `deliverTo`'s target. */
  readonly callbackUrl: string;
  /** `PAYHOOK_BASE_URL`, `PAYHOOK_API_KEY`, `PAYHOOK_WEBHOOK_SECRET`, for an app that reads its configuration from the environment. */
  readonly env: { PAYHOOK_BASE_URL: string; PAYHOOK_API_KEY: string; PAYHOOK_WEBHOOK_SECRET: string };
  /** A typed `@payhook/client` for the sandbox key. */
  readonly client: Client;
  /** The virtual clock (manual: it moves only when advanced). */
  readonly clock: Clock;
  /** Send the service's webhooks to `target` from now on (any `DeliveryTarget`). */
  deliverTo(target: DeliveryTarget, options?: TargetOptions): Promise<void>;
  /** Initialize a sandbox transaction (defaults: 100.00 ETB, phone 0911234567, a new merchant reference). */
  createTransaction(input?: Partial<InitializeInput>): Promise<InitializeResult & { merchantReference: string }>;
  /** Move a transaction by a sandbox action; resolves with its record once the delivery's first attempt was answered. */
  move(reference: string, action: Action, options?: MoveOptions): Promise<TransactionRecord>;
  open(reference: string, options?: MoveOptions): Promise<TransactionRecord>;
  pay(reference: string, options?: MoveOptions): Promise<TransactionRecord>;
  fail(reference: string, options?: MoveOptions): Promise<TransactionRecord>;
  cancel(reference: string, options?: MoveOptions): Promise<TransactionRecord>;
  refund(reference: string, options?: MoveOptions): Promise<TransactionRecord>;
  completeRefund(reference: string, options?: MoveOptions): Promise<TransactionRecord>;
  reverse(reference: string, options?: MoveOptions): Promise<TransactionRecord>;
  /** Add a sandbox fault rule (duplicate, drop, delay, reorder, fail); see docs/service-gaps.md. */
  addFault(fault: FaultInput): Promise<FaultRule>;
  faults(): Promise<FaultRule[]>;
  clearFaults(): Promise<void>;
  /** Move the virtual clock; due retries run, and it resolves once they were answered. */
  advance(ms: number): Promise<void>;
  /** Advance through the whole retry schedule (1 + 2 + 4 + 8 minutes, plus the last attempt's timeout). */
  runRetrySchedule(): Promise<void>;
  /** Every delivery of the sandbox (optionally of one transaction or event), oldest first, with its attempts. */
  deliveries(filter?: { reference?: string; event?: string }): Delivery[];
  /** A request to the service (in process), e.g. `ref.fetch('/_sandbox/clock')`; the sandbox key is sent unless `authorization` is given. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Stop the service, its server, the relay, and any port opened for the target. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

let counter = 0;

/**
 * Start the reference service for a test: a manual (virtual) clock, a sandbox merchant with a
 * generated key and secret, the API on 127.0.0.1 port 0, and a relay on another free port as the
 * callback URL, forwarding each webhook to the target you give (an app, a handler, a URL). Close
 * it with `close()` (in `finally` or `afterEach`). `await using ref = …` does the same where the
 * toolchain supports it (TypeScript 5.2+ down-levels it, Node 24+ runs it); Node 20 does not.
 *
 * @example
 * const ref = await startReferenceService();
 * try {
 *   const shop = createShop(ref.env);
 *   await ref.deliverTo(createApp(shop));
 *   const { reference } = await ref.createTransaction({ merchantReference: 'order-1' });
 *   await ref.addFault({ type: 'duplicate', times: 4, reference });
 *   await ref.pay(reference);
 * } finally {
 *   await ref.close();
 * }
 */
export async function startReferenceService(options: StartReferenceServiceOptions = {}): Promise<TestReferenceService> {
  const apiKey = options.apiKey ?? generateApiKey('sandbox');
  const webhookSecret = options.webhookSecret ?? generateWebhookSecret();
  if (!apiKey.startsWith('sk_test_')) {
    throw new TypeError(
      '[@payhook/testing] startReferenceService: apiKey must be a sandbox key (sk_test_…), or leave it out to generate one.',
    );
  }

  // The relay: the service needs its callback URL at start, the app usually exists only later.
  const relay = await startWebhookRelay();
  const { callbackUrl } = relay;

  const header = options.signatureHeader;
  if (
    header !== undefined &&
    options.service?.signatureHeader !== undefined &&
    options.service.signatureHeader.toLowerCase() !== header.toLowerCase()
  ) {
    await relay.close();
    throw new TypeError(
      `[@payhook/testing] startReferenceService: signatureHeader is ${JSON.stringify(header)} but service.signatureHeader is ${JSON.stringify(options.service.signatureHeader)}; give it once, at the top.`,
    );
  }

  let service: ReferenceService;
  let running: RunningServer | undefined;
  try {
    service = createReferenceService({
      ...options.service,
      ...(header !== undefined && { signatureHeader: header }),
      clock: 'manual',
      allowHttpCallbacks: true,
      merchants: [{ id: 'test', name: 'Test shop', apiKeys: [{ key: apiKey }], webhookSecret, callbackUrl }],
    });
    if (options.startAt !== undefined) {
      const startAt = typeof options.startAt === 'number' ? options.startAt : options.startAt.getTime();
      if (!(startAt >= service.clock.now())) {
        throw new RangeError(
          '[@payhook/testing] startReferenceService: startAt must not be in the past (the virtual clock only moves forward).',
        );
      }
      await service.clock.advance(startAt - service.clock.now());
    }
    if (options.listen !== false) running = await service.listen({ port: 0, host: '127.0.0.1' });
  } catch (error) {
    await relay.close();
    throw error;
  }
  const url = running?.url ?? 'http://reference.invalid';
  const inProcessFetch = (input: RequestInfo | URL, init?: RequestInit) => service.fetch(new Request(input, init));
  const client = createClient({ apiKey, baseUrl: url, fetch: running ? undefined : (inProcessFetch as typeof fetch) });

  /** A sandbox-control request, answered with the bare result (an error envelope on failure, nothing on 204). */
  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await service.fetch(
      new Request(new URL(path, url), {
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
    const text = await res.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const message = (json as { data?: { message?: unknown } } | undefined)?.data?.message;
      throw new Error(
        `[@payhook/testing] ${method} ${path} failed (${res.status}): ${typeof message === 'string' ? message : text || `HTTP ${res.status}`}`,
      );
    }
    return json as T;
  }

  async function move(reference: string, action: Action, moveOptions: MoveOptions = {}): Promise<TransactionRecord> {
    const body = moveOptions.paymentMethod ? { paymentMethod: moveOptions.paymentMethod } : undefined;
    const record = await call<TransactionRecord>('POST', `/_sandbox/transactions/${encodeURIComponent(reference)}/${action}`, body);
    // advance(0) fires nothing new but waits for the deliveries in flight to be answered.
    if (moveOptions.settle !== false) await service.clock.advance(0);
    return record;
  }

  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    if (running) await running.close();
    else service.close();
    await relay.close();
  };

  const ref: TestReferenceService = {
    service,
    url,
    apiKey,
    webhookSecret,
    callbackUrl,
    env: { PAYHOOK_BASE_URL: url, PAYHOOK_API_KEY: apiKey, PAYHOOK_WEBHOOK_SECRET: webhookSecret },
    client,
    clock: service.clock,
    async deliverTo(next, targetOptions) {
      await relay.setTarget(await resolveTarget(next, targetOptions ?? { path: options.path }));
    },
    async createTransaction(input = {}) {
      counter += 1;
      const merchantReference = input.merchantReference ?? `order-${process.pid}-${counter}`;
      const result = await client.transactions.initialize({
        amount: '100.00',
        currencyCode: 'ETB',
        customerPhone: '0911234567',
        ...input,
        merchantReference,
      });
      return { ...result, merchantReference };
    },
    move,
    open: (reference, o) => move(reference, 'open', o),
    pay: (reference, o) => move(reference, 'pay', o),
    fail: (reference, o) => move(reference, 'fail', o),
    cancel: (reference, o) => move(reference, 'cancel', o),
    refund: (reference, o) => move(reference, 'refund', o),
    completeRefund: (reference, o) => move(reference, 'complete-refund', o),
    reverse: (reference, o) => move(reference, 'reverse', o),
    addFault: (fault) => call<FaultRule>('POST', '/_sandbox/faults', fault),
    faults: () => call<FaultRule[]>('GET', '/_sandbox/faults'),
    async clearFaults() {
      await call('DELETE', '/_sandbox/faults');
    },
    advance: (ms) => service.clock.advance(ms),
    runRetrySchedule: () => service.clock.advance(RETRY_DELAYS_MS.reduce((a, b) => a + b, 0) + DELIVERY_TIMEOUT_MS),
    deliveries: (filter = {}) =>
      service
        .deliveries({ merchantId: 'test', mode: 'sandbox', reference: filter.reference })
        .filter((d) => filter.event === undefined || d.event === filter.event),
    fetch(path, init = {}) {
      const headers = new Headers(init.headers);
      if (!headers.has('authorization')) headers.set('authorization', `Bearer ${apiKey}`);
      return service.fetch(new Request(new URL(path, url), { ...init, headers }));
    },
    close,
    [Symbol.asyncDispose]: close,
  };
  if (options.deliverTo !== undefined) {
    try {
      await ref.deliverTo(options.deliverTo, { path: options.path });
    } catch (error) {
      await close();
      throw error;
    }
  }
  return ref;
}
