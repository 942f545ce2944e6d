import secureJson from 'secure-json-parse';
import { bodyUnavailable } from './body-unavailable.js';
import { NonRetriableError } from './errors.js';
import type { TransactionRecord } from './api-schema.js';
import {
  createEventRouter,
  type EventHandler,
  type EventRouter,
  type HandlerContext,
  type HandlerOptions,
} from './event-router.js';
import { isPaymentEventName, paymentEventSchema, type PaymentEvent, type PaymentEventName } from './event-schema.js';
import { memoryStore } from './memory-store.js';
import { readBodyLimited } from './read-body.js';
import { createVerifier, nodeCrypto, verifySignatureAsync, type RawBody } from './signature.js';
import type { Store } from './store.js';

/** The header the service signs with; HTTP header names are case-insensitive. */
export const SIGNATURE_HEADER = 'x-service-signature';
/** The service counts a delivery as failed when no 2xx comes within this many milliseconds. */
export const SERVICE_TIMEOUT_MS = 10_000;

export interface Logger {
  info(message: string, fields: DeliveryReport): void;
  warn(message: string, fields: DeliveryReport): void;
  error(message: string, fields: DeliveryReport): void;
}

export interface ReceiverOptions {
  /** The webhook secret, or several during a rotation (the first that matches wins). */
  secret: string | readonly string[];
  /** Where claims and done records live. Default: `memoryStore()`, one process only. */
  store?: Store;
  /** Answer within this many milliseconds whatever the handler does. Default 8000; must be below 10000. */
  budgetMs?: number;
  /** Largest body accepted, in bytes. Default 1 MiB. */
  maxBodyBytes?: number;
  /** What makes two deliveries the same. Default: mode + reference + event. */
  dedupeKey?: (event: PaymentEvent) => string;
  /** How long a claim holds before another process may take it over. Default 30 s, inside the service's first 1-minute retry gap. */
  leaseMs?: number;
  /** How long done records are kept. Default: the store's retention. */
  retentionMs?: number;
  /** Where every outcome is reported. Default: warnings and errors to the console. */
  logger?: Partial<Logger>;
  /** The API client (`@payhook/client`) used to fetch the service's record for handlers that ask for it. */
  client?: RecordClient;
  /** Fetch and check the service's record before every handler, as if each were registered with `{ verify: true }`. */
  verifyBeforeHandling?: boolean;
}

/** The part of `@payhook/client` the receiver uses to ask the service for the authoritative record. */
export interface RecordClient {
  transactions: {
    verify(reference: string): Promise<TransactionRecord>;
    retrieve(reference: string): Promise<TransactionRecord>;
  };
}

/** What the pipeline needs of a delivery, whatever the framework. */
export interface RawDelivery {
  method: string;
  /** The `X-Service-Signature` header as the framework gives it (a string, a list, or absent). */
  signature: unknown;
  /** The untouched body bytes. */
  body: RawBody;
}

export type DeliveryOutcome =
  | 'processed' // 200: handlers ran
  | 'duplicate' // 200: done before, nothing ran
  | 'ignored' // 200: no handler for this event, or an event name the service does not define
  | 'rejected' // 200: a handler threw NonRetriableError; marked done, not retried
  | 'mismatch' // 200: the service's record does not agree with the event; no handler ran, the claim is released
  | 'accepted' // 202: the budget ran out; the handler goes on and its outcome is recorded
  | 'malformed' // 400: signed, but not a valid payload
  | 'unauthorized' // 401: signature missing or wrong
  | 'method-not-allowed' // 405
  | 'in-progress' // 409: another delivery of the same event is running; the service retries later
  | 'too-large' // 413
  | 'failed' // 500: a handler threw; the claim is released so the retry runs it again
  | 'body-unavailable' // 500: something read the body before payhook; fix the mounting
  | 'store-unavailable' // 503: the store could not be reached; the service retries
  | 'verify-unavailable'; // 503: the service's record could not be fetched; the service retries

export interface DeliveryReport {
  outcome: DeliveryOutcome;
  status: number;
  reference?: string;
  event?: string;
  dedupeKey?: string;
  /** Set on errors: what went wrong, for logs only (never sent back to the service). */
  error?: unknown;
  /** True for outcomes reported after the response was sent (a handler that finished after a 202). */
  late?: boolean;
  /** `webhook` for a signed delivery, `reconcile` for an event recovered through the API. */
  source?: HandlerContext['source'];
}

export interface ReceiverResult {
  status: number;
  headers: Record<string, string>;
  /** A short JSON body naming the outcome; never internal error text. */
  body: string;
  report: DeliveryReport;
}

export type ErrorHandler = (error: unknown, report: DeliveryReport) => void;

export interface Receiver {
  /** Run `handler` for one event or several; `{ verify: true }` runs it only once the service's record agrees. */
  on<E extends PaymentEventName>(event: E | readonly E[], handler: EventHandler<E>, options?: HandlerOptions): Receiver;
  onAny(handler: EventHandler, options?: HandlerOptions): Receiver;
  /** Called for every failure: handler errors (also after a 202), rejected events, store errors. */
  onError(handler: ErrorHandler): Receiver;
  /** The web-standard entry: Hono, Next's App Router, Bun, Deno, workers. `framework` names the fix when the body was already read. */
  handle(request: Request, options?: { framework?: string }): Promise<Response>;
  /** The pipeline on an already-read body; adapters and the Node bridge call this. */
  process(delivery: RawDelivery): Promise<ReceiverResult>;
  /** Run an event that needs no signature check (recovered by a reconcile) through the same store and router. */
  dispatch(
    event: PaymentEvent,
    options?: { source?: HandlerContext['source']; record?: TransactionRecord },
  ): Promise<DeliveryReport>;
  /** Build the answer for a failure found before the pipeline (oversized body, body already read). */
  reject(outcome: 'too-large' | 'body-unavailable' | 'malformed', error?: unknown): ReceiverResult;
  readonly store: Store;
  readonly maxBodyBytes: number;
  readonly dedupeKey: (event: PaymentEvent) => string;
}

const STATUS: Record<DeliveryOutcome, number> = {
  processed: 200,
  duplicate: 200,
  ignored: 200,
  rejected: 200,
  mismatch: 200,
  accepted: 202,
  malformed: 400,
  unauthorized: 401,
  'method-not-allowed': 405,
  'in-progress': 409,
  'too-large': 413,
  failed: 500,
  'body-unavailable': 500,
  'store-unavailable': 503,
  'verify-unavailable': 503,
};

/**
 * The statuses a transaction may have once the event happened: a success stays true of a payment
 * that was refunded or reversed since.
 */
const AGREES: Record<PaymentEventName, readonly string[]> = {
  'payment.success': ['completed', 'refunding', 'refunded', 'reversed'],
  'payment.failed': ['failed'],
  'payment.cancelled': ['cancelled'],
  'payment.refunding': ['refunding', 'refunded'],
  'payment.refunded': ['refunded'],
  'payment.reversed': ['reversed'],
};

const BODY_UNAVAILABLE =
  '[@payhook/core] the request body was already read before payhook saw it, so its signature cannot be checked. ' +
  'Give the receiver the untouched request: mount it before any body parser.';

const utf8 = new TextDecoder('utf-8', { fatal: true });

const defaultLogger: Logger = {
  info() {},
  warn: (message, fields) => console.warn(message, fields),
  error: (message, fields) => console.error(message, fields),
};

/** The default dedupe key. Not the reference alone: one transaction emits success, then refunding, then refunded. */
export const defaultDedupeKey = (event: PaymentEvent): string => `${event.mode}:${event.reference}:${event.event}`;

/**
 * Create the receiver: verify on raw bytes, parse, deduplicate through the store, route to typed
 * handlers, and answer within the budget whatever the handlers do.
 *
 * @example
 * const receiver = createReceiver({ secret: process.env.PAYHOOK_WEBHOOK_SECRET! })
 *   .on('payment.success', async (event, ctx) => {
 *     await orders.markPaid(event.merchantReference, ctx.reference);
 *   });
 * export const POST = (request: Request) => receiver.handle(request);
 */
export function createReceiver(options: ReceiverOptions): Receiver {
  const secrets = checkSecrets(options.secret);
  // Node's crypto when the runtime has it (faster, synchronous, keys prepared once); Web Crypto elsewhere.
  const verify = nodeCrypto() ? createVerifier(secrets) : undefined;
  const budgetMs = options.budgetMs ?? 8_000;
  if (!(budgetMs > 0 && budgetMs < SERVICE_TIMEOUT_MS)) {
    throw new RangeError(
      `[@payhook/core] budgetMs must be above 0 and below ${SERVICE_TIMEOUT_MS} (the service's timeout); got ${budgetMs}. Leave it unset for 8000.`,
    );
  }
  const leaseMs = options.leaseMs ?? 30_000;
  if (!(leaseMs > budgetMs)) {
    throw new RangeError(`[@payhook/core] leaseMs (${leaseMs}) must be longer than budgetMs (${budgetMs}).`);
  }
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  if (!(Number.isInteger(maxBodyBytes) && maxBodyBytes > 0)) {
    throw new RangeError(`[@payhook/core] maxBodyBytes must be a positive whole number of bytes; got ${maxBodyBytes}.`);
  }
  if (options.verifyBeforeHandling) needsClient({ verify: true });
  const store = options.store ?? memoryStore();
  const dedupeKey = options.dedupeKey ?? defaultDedupeKey;
  const logger: Logger = { ...defaultLogger, ...options.logger };
  const router: EventRouter = createEventRouter();
  const errorHandlers: ErrorHandler[] = [];

  const message = (r: DeliveryReport) => `[@payhook/core] ${r.late ? 'late outcome' : 'delivery'} ${r.outcome} (${r.status})`;
  function report(r: DeliveryReport): DeliveryReport {
    if (r.error !== undefined) {
      logger.error(message(r), r);
      for (const h of errorHandlers) {
        try {
          h(r.error, r);
        } catch (e) {
          logger.error('[@payhook/core] an onError handler threw', { ...r, error: e });
        }
      }
    } else if (r.status >= 400) logger.warn(message(r), r);
    // Successes are the hot path: no message is built for the default, silent info logger.
    else if (logger.info !== defaultLogger.info) logger.info(message(r), r);
    return r;
  }

  function result(outcome: DeliveryOutcome, fields: Omit<DeliveryReport, 'outcome' | 'status'> = {}): ReceiverResult {
    return answer({ outcome, status: STATUS[outcome], ...fields });
  }

  /** The HTTP answer for a report, which is logged once here. */
  function answer(r: DeliveryReport): ReceiverResult {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (r.status === 405) headers.allow = 'POST';
    // Stop reading an oversized upload rather than drain it.
    if (r.status === 413) headers.connection = 'close';
    return { status: r.status, headers, body: `{"outcome":"${r.outcome}"}`, report: report(r) };
  }

  /** Run the handlers of a claimed event and record what happened; resolves when they are done. */
  async function run(event: PaymentEvent, ctx: HandlerContext, token: string): Promise<DeliveryReport> {
    const fields = { reference: event.reference, event: event.event, dedupeKey: ctx.dedupeKey, source: ctx.source };
    const release = () =>
      store.release(ctx.dedupeKey, token).catch(() => {
        // The lease runs out by itself; the retry then takes the claim over.
      });
    if (options.verifyBeforeHandling || router.wantsRecord(event.event)) {
      const checked = await checkRecord(event, ctx);
      if (checked) {
        await release();
        return { ...checked, ...fields };
      }
    }
    try {
      await router.dispatch(event, ctx);
    } catch (error) {
      if (error instanceof NonRetriableError) {
        await store.complete(ctx.dedupeKey, token, { outcome: 'failed', ttlMs: options.retentionMs }).catch(() => {
          completeLater(ctx.dedupeKey, token, 'failed', fields);
        });
        return { outcome: 'rejected', status: 200, ...fields, error };
      }
      await release();
      return { outcome: 'failed', status: 500, ...fields, error };
    }
    try {
      const held = await store.complete(ctx.dedupeKey, token, { outcome: 'ok', ttlMs: options.retentionMs });
      if (!held) {
        const error = new Error(
          `[@payhook/core] the claim on ${ctx.dedupeKey} expired before its handler finished, so another delivery may have run it too. Raise leaseMs above your slowest handler.`,
        );
        return { outcome: 'processed', status: 200, ...fields, error };
      }
    } catch {
      // The handlers ran: answering 5xx would make a second run certain. Answer 200 and keep trying.
      completeLater(ctx.dedupeKey, token, 'ok', fields);
    }
    return { outcome: 'processed', status: 200, ...fields };
  }

  /**
   * The handlers ran but the done record could not be written (the store is overloaded or briefly
   * down). Keep the claim alive and try again in the background: a copy arriving meanwhile gets 409
   * and, when the service retries it, finds the event done instead of running it a second time.
   */
  function completeLater(key: string, token: string, outcome: 'ok' | 'failed', fields: Omit<DeliveryReport, 'outcome' | 'status'>) {
    let tries = 0;
    const late = (error: unknown) => report({ outcome: outcome === 'ok' ? 'processed' : 'rejected', status: 200, ...fields, late: true, error });
    const attempt = async () => {
      tries += 1;
      let held: boolean;
      try {
        // complete is idempotent for its token, so a first complete that landed but went unanswered is fine.
        held = await store.complete(key, token, { outcome, ttlMs: options.retentionMs });
      } catch (error) {
        if (tries >= 8) return late(error);
        void store.extend(key, token, leaseMs).catch(() => false);
        setTimeout(attempt, Math.min(leaseMs / 3, 250 * 2 ** tries)).unref?.();
        return;
      }
      if (!held) late(new Error(`[@payhook/core] the claim on ${key} was lost before its done record could be written; the event may run again.`));
    };
    setTimeout(attempt, 250).unref?.();
  }

  /** Put the service's record on `ctx`, or say why the handlers must not run. */
  async function checkRecord(
    event: PaymentEvent,
    ctx: HandlerContext,
  ): Promise<Pick<DeliveryReport, 'outcome' | 'status' | 'error'> | undefined> {
    const { transactions } = options.client!;
    try {
      ctx.record ??=
        event.event === 'payment.success'
          ? // verify answers 400 for anything but completed; a refund since then still agrees with the success.
            await transactions.verify(event.reference).catch((e: { status?: number }) => {
              if (e?.status === 400) return transactions.retrieve(event.reference);
              throw e;
            })
          : await transactions.retrieve(event.reference);
    } catch (error) {
      // 404 (not this account's) is the service's answer; anything else may pass.
      const status = (error as { status?: number }).status;
      if (status === 400 || status === 404) return { outcome: 'mismatch', status: 200, error };
      return { outcome: 'verify-unavailable', status: 503, error };
    }
    if (AGREES[event.event].includes(ctx.record.status)) return undefined;
    const error = new Error(
      `[@payhook/core] the service says ${event.reference} is ${ctx.record.status}, which does not agree with ${event.event}; its handlers did not run.`,
    );
    return { outcome: 'mismatch', status: 200, error };
  }

  async function claimAndRun(
    event: PaymentEvent,
    secretIndex: number | null,
    source: HandlerContext['source'],
    budget: number,
    record?: TransactionRecord,
  ): Promise<DeliveryReport> {
    const key = dedupeKey(event);
    const fields = { reference: event.reference, event: event.event, dedupeKey: key, source };
    if (!isPaymentEventName(event.event) || !router.handles(event.event)) {
      return { outcome: 'ignored', status: 200, ...fields };
    }
    // One budget covers the claim and the handlers: a store that hangs must not hold the answer past it.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline =
      budget === Infinity
        ? undefined
        : new Promise<'late'>((resolve) => {
            timer = setTimeout(resolve, budget, 'late');
          });
    const claiming = store.claim(key, leaseMs);
    let claim: Awaited<typeof claiming> | 'late';
    try {
      claim = await (deadline ? Promise.race([claiming, deadline]) : claiming);
    } catch (error) {
      clearTimeout(timer);
      return { outcome: 'store-unavailable', status: 503, ...fields, error };
    }
    if (claim === 'late') {
      // If the claim lands after all, give it back so the service's retry can run the event.
      void claiming.then((c) => c.status === 'claimed' && store.release(key, c.token)).catch(() => {});
      const error = new Error(`[@payhook/core] the store did not answer a claim within ${budget} ms; check that it is reachable.`);
      return { outcome: 'store-unavailable', status: 503, ...fields, error };
    }
    if (claim.status !== 'claimed') clearTimeout(timer);
    if (claim.status === 'done') return { outcome: 'duplicate', status: 200, ...fields };
    if (claim.status === 'in-progress') return { outcome: 'in-progress', status: 409, ...fields };
    const { token, attempt } = claim;
    const ctx: HandlerContext = {
      reference: event.reference,
      dedupeKey: key,
      secretIndex,
      redelivery: attempt > 1,
      attempt,
      claimToken: token,
      source,
      record,
    };
    const running = run(event, ctx, token);
    if (!deadline) return running;
    const first = await Promise.race([running, deadline]);
    clearTimeout(timer);
    if (first !== 'late') return first;

    // Past the budget: answer 202 now, keep the claim alive while the handler runs, report its outcome later.
    const extend = () => store.extend(key, token, leaseMs).catch(() => false);
    void extend();
    const keepAlive = setInterval(extend, Math.max(1, Math.floor(leaseMs / 3)));
    keepAlive.unref?.();
    void running.then((late) => {
      clearInterval(keepAlive);
      report({ ...late, late: true });
    });
    return { outcome: 'accepted', status: 202, ...fields };
  }

  async function process(delivery: RawDelivery): Promise<ReceiverResult> {
    if (delivery.method.toUpperCase() !== 'POST') return result('method-not-allowed');
    const { body } = delivery;
    const size = typeof body === 'string' ? utf8Length(body) : body.byteLength;
    if (size > maxBodyBytes) return result('too-large');

    const verified = verify ? verify(body, delivery.signature) : await verifySignatureAsync(body, delivery.signature, secrets);
    if (!verified.ok) return result('unauthorized');

    let event: PaymentEvent;
    try {
      const text = typeof body === 'string' ? body : utf8.decode(body);
      const parsed = paymentEventSchema.safeParse(
        secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }),
      );
      if (!parsed.success) return result('malformed', { error: parsed.error });
      event = parsed.data as PaymentEvent;
    } catch (error) {
      return result('malformed', { error });
    }
    return answer(await claimAndRun(event, verified.secretIndex, 'webhook', budgetMs));
  }

  const receiver: Receiver = {
    on(event, handler, handlerOptions) {
      needsClient(handlerOptions);
      router.on(event, handler, handlerOptions);
      return receiver;
    },
    onAny(handler, handlerOptions) {
      needsClient(handlerOptions);
      router.onAny(handler, handlerOptions);
      return receiver;
    },
    onError(handler) {
      errorHandlers.push(handler);
      return receiver;
    },
    process,
    async handle(request, handleOptions = {}) {
      const r = await handleRequest(request, handleOptions.framework);
      return new Response(r.body, { status: r.status, headers: r.headers });
    },
    async dispatch(event, opts = {}) {
      return report(await claimAndRun(event, null, opts.source ?? 'reconcile', Infinity, opts.record));
    },
    reject(outcome, error) {
      return result(outcome, error === undefined ? {} : { error });
    },
    store,
    maxBodyBytes,
    dedupeKey,
  };

  function needsClient(handlerOptions: HandlerOptions | undefined) {
    if (handlerOptions?.verify && !options.client) {
      throw new TypeError(
        '[@payhook/core] a handler asked for { verify: true }, but the receiver has no client: pass createReceiver({ client: createClient({ apiKey, baseUrl }) }).',
      );
    }
  }

  async function handleRequest(request: Request, framework: string | undefined): Promise<ReceiverResult> {
    if (request.method.toUpperCase() !== 'POST') return result('method-not-allowed');
    if (request.bodyUsed) {
      const message = framework ? bodyUnavailable(framework, undefined) : BODY_UNAVAILABLE;
      return result('body-unavailable', { error: new Error(message) });
    }
    const read = await readBodyLimited(request, maxBodyBytes);
    if (read === 'too-large') return result('too-large');
    return process({ method: request.method, signature: request.headers.get(SIGNATURE_HEADER) ?? undefined, body: read });
  }

  return receiver;
}

function checkSecrets(secret: string | readonly string[]): readonly string[] {
  const list = typeof secret === 'string' ? [secret] : secret;
  if (!Array.isArray(list) || list.length === 0 || list.some((s) => typeof s !== 'string' || s.length === 0)) {
    throw new TypeError(
      '[@payhook/core] `secret` must be the webhook secret (a non-empty string) or a non-empty list of them; set it from your dashboard\'s webhook secret.',
    );
  }
  return list;
}

const utf8Length = (text: string) => new TextEncoder().encode(text).byteLength;
