import type { Mode } from '../protocol/payment-lifecycle.js';
import { systemClock, type Clock } from '../base/clock.js';
import type { PaymentEvent } from '../protocol/event-schema.js';
import { memoryStore } from '../storage/memory-store.js';
import { toLog } from '../base/logger.js';
import type { LoggerOption } from '../contracts/log-fields.js';
import type { Telemetry } from '../contracts/handling.js';
import type { Handoff } from '../contracts/handling.js';
import type { RecordClient } from '../contracts/handling.js';
import type { Store } from '../storage/store-contract.js';
import { checkSecrets, resolveAccounts, type AccountsOptions } from './accounts-options.js';
import { EPAY_SIGNATURE_HEADER, SIGNATURE_HEADER } from '../protocol/signature.js';

export { EPAY_SIGNATURE_HEADER, SIGNATURE_HEADER };
/** Signature headers payhook knows: when the configured one is absent but another came, the log says so. */
const KNOWN_SIGNATURE_HEADERS = [SIGNATURE_HEADER, EPAY_SIGNATURE_HEADER] as const;
/** The service counts a delivery as failed when no 2xx comes within this many milliseconds. */
export const SERVICE_TIMEOUT_MS = 10_000;

/** What a receiver and a queue worker share: where claims live, how long they hold, how outcomes are told. */
export interface RunOptions {
  /** Where claims and done records live. Default: `memoryStore()`, one process only. */
  store?: Store;
  /** What makes two deliveries the same. Default: mode + reference + event. */
  dedupeKey?: (event: PaymentEvent) => string;
  /**
   * How long a claim holds before another process may take it over; a running handler keeps
   * extending it. Default 30 s, inside the service's first 1-minute retry gap.
   */
  leaseMs?: number;
  /** How long done records are kept. Default: the store's retention. */
  retentionMs?: number;
  /**
   * Where every outcome is logged, as it is: pino (or a child), winston, bunyan, `console`, or a
   * function `(level, fields, message)`. Fields first, message second, errors under `err`; a
   * logger that throws changes no answer. Default: warnings and errors to the console.
   */
  logger?: LoggerOption;
  /** The API client (`@payhook/client`) used to fetch the service's record for handlers that ask for it. */
  client?: RecordClient;
  /** Fetch and check the service's record before every handler, as if each were registered with `{ verify: true }`. */
  verifyBeforeHandling?: boolean;
  /** Time and timers, for tests (budgets, lease keep-alive, retries of the done record). Default: the real ones. */
  clock?: Clock;
  /** Spans and metrics for every delivery: `openTelemetry()` from `@payhook/core/otel`. Default: none. */
  telemetry?: Telemetry;
}

export interface ReceiverOptions extends RunOptions {
  /** The webhook secret, or several during a rotation (the first that matches wins). Not with `accounts`. */
  secret?: string | readonly string[];
  /**
   * Many merchant accounts on one endpoint, each with its own secrets (a platform): the account is
   * read from the path or a header, its secrets from `accounts.resolve`, cached. Instead of `secret`.
   */
  accounts?: AccountsOptions;
  /** Answer within this many milliseconds whatever the handler does. Default 8000; must be below 10000. */
  budgetMs?: number;
  /**
   * The answer when the budget runs out with a handler still running and the platform gave no
   * `waitUntil` (see `handle`). `accept` (default): 202, the handler goes on in this process, right
   * for long-running servers. `retry`: 503, so the service retries, for serverless platforms that
   * freeze a function once it has answered; the retry finds the event done or runs it again.
   */
  afterBudget?: 'accept' | 'retry';
  /**
   * What a copy does when it finds its event still running in another delivery. `wait` (default):
   * it waits for that delivery within its own budget, and answers 200 `duplicate` once it is done
   * (or runs the event itself if that delivery failed and gave it up); 409 only if it is still
   * running at the budget. `retry`: 409 at once, and the service retries about a minute later.
   */
  onInProgress?: 'wait' | 'retry';
  /**
   * The ordering guard: run an event's handlers only once the events before it in the
   * transaction's life ran (a refund after its success and its refunding), as the store's done
   * records tell. `hold`: answer 409 `held` so the service retries it later. `fetch`: ask the
   * service for the record (needs `client`) and run the missing events first, in lifecycle order,
   * within half the budget. Default: off, handlers run in the order deliveries arrive.
   */
  ordering?: 'hold' | 'fetch';
  /**
   * The header the signature comes in, any case. Default `X-Service-Signature`, the interface's
   * name. ePay's real deliveries carry `X-Epay-Signature`: pass `EPAY_SIGNATURE_HEADER`.
   */
  signatureHeader?: string;
  /** Largest body accepted, in bytes. Default 1 MiB. */
  maxBodyBytes?: number;
  /**
   * Longest a body may take to arrive once payhook starts reading it; past it the answer is 408
   * and the connection is closed. Default 10000: the service gives up on a delivery after 10 s,
   * so a body still arriving then is not the service's.
   */
  bodyTimeoutMs?: number;
  /**
   * The environment the webhook secret belongs to. Only used to explain a signature that failed:
   * a delivery for the other environment is named as the likely cause (the sandbox secret in live).
   */
  mode?: Mode;
  /**
   * Put every verified, new event on a durable queue instead of running handlers here, and answer
   * 200 `queued` once the queue has it: `bullmqQueue()` from `@payhook/queue-bullmq` or
   * `pgBossQueue()` from `@payhook/queue-pg-boss`. Handlers are then registered on the workers.
   */
  handoff?: Handoff;
}

/** The default dedupe key. Not the reference alone: one transaction emits success, then refunding, then refunded. */
export const defaultDedupeKey = (event: PaymentEvent): string => `${event.mode}:${event.reference}:${event.event}`;

/** The options a receiver and a queue worker share, with every default filled in and checked. */
export function resolveRunOptions(options: RunOptions) {
  const leaseMs = options.leaseMs ?? 30_000;
  if (!(Number.isFinite(leaseMs) && leaseMs > 0)) {
    throw new RangeError(`[@payhook/core] leaseMs must be a positive number of milliseconds; got ${leaseMs}. Leave it unset for 30000.`);
  }
  const clock = options.clock ?? systemClock;
  return {
    leaseMs,
    retentionMs: options.retentionMs,
    clock,
    store: options.store ?? memoryStore({ now: () => clock.now() }),
    dedupeKey: options.dedupeKey ?? defaultDedupeKey,
    log: toLog(options.logger),
    telemetry: options.telemetry,
    client: options.client,
    verifyBeforeHandling: options.verifyBeforeHandling === true,
  };
}

/** The options with every default filled in and every value checked, once, when the receiver is created. */
export function resolveOptions(options: ReceiverOptions) {
  const budgetMs = options.budgetMs ?? 8_000;
  if (!(budgetMs > 0 && budgetMs < SERVICE_TIMEOUT_MS)) {
    throw new RangeError(
      `[@payhook/core] budgetMs must be above 0 and below ${SERVICE_TIMEOUT_MS} (the service's timeout); got ${budgetMs}. Leave it unset for 8000.`,
    );
  }
  const afterBudget = options.afterBudget ?? 'accept';
  if (afterBudget !== 'accept' && afterBudget !== 'retry') {
    throw new TypeError(
      `[@payhook/core] afterBudget must be 'accept' or 'retry'; got ${String(afterBudget)}. Leave it unset for 'accept'.`,
    );
  }
  const onInProgress = options.onInProgress ?? 'wait';
  if (onInProgress !== 'wait' && onInProgress !== 'retry') {
    throw new TypeError(`[@payhook/core] onInProgress must be 'wait' or 'retry'; got ${String(onInProgress)}. Leave it unset for 'wait'.`);
  }
  const ordering = options.ordering;
  if (ordering !== undefined && ordering !== 'hold' && ordering !== 'fetch') {
    throw new TypeError(
      `[@payhook/core] ordering must be 'hold' or 'fetch'; got ${String(ordering)}. Leave it unset to run events in the order they arrive.`,
    );
  }
  const run = resolveRunOptions(options);
  // With `accounts`, each account may bring its own client.
  if (ordering === 'fetch' && !run.client && options.accounts === undefined) {
    throw new TypeError(
      "[@payhook/core] ordering: 'fetch' asks the service for the record: pass createReceiver({ client: createClient({ apiKey, baseUrl }) }), or use ordering: 'hold'.",
    );
  }
  if (!(run.leaseMs > budgetMs)) {
    throw new RangeError(`[@payhook/core] leaseMs (${run.leaseMs}) must be longer than budgetMs (${budgetMs}).`);
  }
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  if (!(Number.isInteger(maxBodyBytes) && maxBodyBytes > 0)) {
    throw new RangeError(`[@payhook/core] maxBodyBytes must be a positive whole number of bytes; got ${maxBodyBytes}.`);
  }
  const bodyTimeoutMs = options.bodyTimeoutMs ?? SERVICE_TIMEOUT_MS;
  if (!(Number.isFinite(bodyTimeoutMs) && bodyTimeoutMs > 0)) {
    throw new RangeError(
      `[@payhook/core] bodyTimeoutMs must be a positive number of milliseconds; got ${bodyTimeoutMs}. Leave it unset for ${SERVICE_TIMEOUT_MS}.`,
    );
  }
  const handoff = checkHandoff(options.handoff, run.verifyBeforeHandling);
  const accounts = options.accounts === undefined ? undefined : resolveAccounts(options.accounts, { ...options, budgetMs });
  return {
    ...run,
    secrets: accounts ? [] : checkSecrets(options.secret),
    accounts,
    budgetMs,
    afterBudget,
    onInProgress,
    ordering,
    maxBodyBytes,
    bodyTimeoutMs,
    mode: checkMode(options.mode),
    signatureHeader: signatureHeaderName(options.signatureHeader),
    handoff,
  };
}

/**
 * The signature header a receiver created with `signatureHeader: name` reads, lower case as Node
 * and fetch give header names; throws on a value that is not an HTTP header name.
 *
 * @example
 * signatureHeaderName('X-Epay-Signature'); // 'x-epay-signature'
 * signatureHeaderName(undefined); // 'x-service-signature'
 */
export function signatureHeaderName(name: unknown): string {
  if (name === undefined) return SIGNATURE_HEADER;
  if (typeof name === 'string' && /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) return name.toLowerCase();
  throw new TypeError(
    `[@payhook/core] signatureHeader must be an HTTP header name such as 'X-Epay-Signature'; got ${JSON.stringify(name)}. Leave it unset for 'X-Service-Signature'.`,
  );
}

/**
 * When a delivery lacks the configured signature header: the other known one it carried, if any
 * (ePay's `X-Epay-Signature` at a receiver left on the interface's default, or the reverse).
 */
export function signatureHeaderSeen(configured: string, has: (name: string) => boolean): string | undefined {
  return KNOWN_SIGNATURE_HEADERS.find((name) => name !== configured && has(name));
}

function checkMode(mode: unknown): Mode | undefined {
  if (mode === undefined || mode === 'live' || mode === 'sandbox') return mode;
  throw new TypeError(
    `[@payhook/core] mode must be 'live' or 'sandbox' (the environment of the webhook secret); got ${String(mode)}. Leave it unset if unsure.`,
  );
}

function checkHandoff(handoff: Handoff | undefined, verifyBeforeHandling: boolean): Handoff | undefined {
  if (handoff === undefined) return undefined;
  if (typeof (handoff as Partial<Handoff>).enqueue !== 'function') {
    throw new TypeError(
      '[@payhook/core] handoff must be a queue such as bullmqQueue() from @payhook/queue-bullmq or pgBossQueue() from @payhook/queue-pg-boss.',
    );
  }
  if (verifyBeforeHandling) {
    throw new TypeError(
      '[@payhook/core] verifyBeforeHandling runs where the handlers run: with a handoff, set it on the worker (createWorker), not on the receiver.',
    );
  }
  return handoff;
}

/** Handlers that ask for the service's record need a client to ask with. */
export function needsClient(client: RecordClient | undefined, handlerOptions: { verify?: boolean } | undefined): void {
  if (handlerOptions?.verify && !client) {
    throw new TypeError(
      '[@payhook/core] a handler asked for { verify: true }, but the receiver has no client: pass createReceiver({ client: createClient({ apiKey, baseUrl }) }).',
    );
  }
}
