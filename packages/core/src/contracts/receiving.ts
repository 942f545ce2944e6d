/**
 * The receiver as merchants and adapters see it: types only, so that the ledger's tools, the Node
 * bridge and the entries name it without importing the wiring.
 */
import type { TransactionRecord } from '../protocol/api-schema.js';
import type { PaymentEvent, PaymentEventName } from '../protocol/event-schema.js';
import type { BodyDeadline } from '../reading/read-body.js';
import type { Store } from '../storage/store-contract.js';
import type { LogLevel } from '../base/logger.js';
import type { LogFields } from './log-fields.js';
import type { DeliveryReport, DeliverySource, ErrorHandler, RawDelivery, ReceiverResult } from './delivery.js';
import type { EventHandler, HandlerOptions } from './handling.js';

/** A receiver, as `createReceiver` makes it: register handlers, then mount `handle` (or an adapter) at the webhook route. */
export interface Receiver {
  /** Run `handler` for one event or several; `{ verify: true }` runs it only once the service's record agrees. */
  on<E extends PaymentEventName>(event: E | readonly E[], handler: EventHandler<E>, options?: HandlerOptions): Receiver;
  /** Run `handler` for every event, after the `on` handlers of its name. */
  onAny(handler: EventHandler, options?: HandlerOptions): Receiver;
  /** Called for every failure: handler errors (also after a 202), rejected events, store errors. */
  onError(handler: ErrorHandler): Receiver;
  /**
   * The web-standard entry: Hono, Next's App Router, Bun, Deno, workers. Pass the platform's
   * `waitUntil` (a Worker's `ctx.waitUntil`, Vercel's, Next's `after`) so that a handler still
   * running at the budget is kept alive after the 202.
   */
  handle(request: Request, options?: HandleOptions): Promise<Response>;
  /**
   * Run a delivery recorded in the ledger again, through the same steps: the signature checked on
   * the stored bytes, the same dedupe (a done event answers `duplicate` unless `force`, which runs
   * it under a key of its own and is recorded). Resolves once the replay's own record is written.
   */
  replay(id: string, options?: ReplayOptions): Promise<DeliveryReport>;
  /** Run an event that needs no signature check (recovered by a reconcile) through the same store and router. */
  dispatch(
    event: PaymentEvent,
    options?: { source?: DeliverySource; record?: TransactionRecord; account?: string },
  ): Promise<DeliveryReport>;
  /**
   * Resolves once the ledger holds every delivery answered so far (a record is written after its
   * answer, in batches), or has given up on one and logged why. For tests and for a graceful
   * shutdown; at once when the store keeps no ledger.
   */
  idle(): Promise<void>;
  /**
   * With `accounts`: drop what is cached of an account (its settings, or that nobody had that name),
   * so that its next delivery asks `accounts.resolve` again: after a secret is added for a
   * rotation, or an account joins or leaves. Throws on a receiver without `accounts`.
   */
  forgetAccount(account: string): void;
  /** The store the receiver claims deliveries in. */
  readonly store: Store;
  /** How the receiver keys an event for dedupe (`dedupeKey` option, or mode + reference + event). */
  readonly dedupeKey: (event: PaymentEvent) => string;
}

/** What `handle` takes beside the request. */
export interface HandleOptions {
  /** Keeps work alive after the answer on platforms that would otherwise freeze or cancel it. */
  waitUntil?: (work: Promise<unknown>) => void;
  /** The framework's name, for the error that says how to mount payhook when the body was already read. */
  framework?: string;
}

/** What adapters get of a receiver, through `adapterOf` from `@payhook/core/adapter`. */
export interface ReceiverAdapter {
  /** The pipeline on what the adapter read: bytes, or why there are none. */
  process(delivery: RawDelivery): Promise<ReceiverResult>;
  /** The bare 500 for an error outside the pipeline (in the adapter itself), logged through the receiver. Never throws. */
  fail(error: unknown): ReceiverResult;
  /** Largest body accepted, in bytes (the `maxBodyBytes` option). */
  readonly maxBodyBytes: number;
  /** How long a body may take to arrive, on the receiver's clock; past it the delivery is `too-slow`. */
  readonly bodyDeadline: BodyDeadline;
  /** The header to read the signature from, lower case. */
  readonly signatureHeader: string;
  /**
   * With `accounts`: the account a request names, from its URL (path, query and all, as the
   * framework gives it) and its headers (lower-case names). Unchecked; the pipeline checks it.
   */
  readonly accountOf: ((url: string | undefined, header: (name: string) => unknown) => string | undefined) | undefined;
  /** The receiver's own logger, for what a tool beside it does (the board's audit lines). Never throws. */
  readonly log: (level: LogLevel, fields: LogFields, message: string) => void;
}

/** How `replay` runs a recorded delivery. */
export interface ReplayOptions {
  /** Run a done event's handlers again, under a key of this replay's own. Recorded as `forced`. */
  force?: boolean;
}
