import type { TransactionRecord } from './api-schema.js';
import type { PaymentEvent, PaymentEventName } from './event-schema.js';
import { isPromise, type Awaitable } from './maybe-async.js';

/** What a handler learns about the delivery beside the event itself. */
export interface HandlerContext {
  reference: string;
  /** The key the delivery was deduplicated on (mode + reference + event by default). */
  dedupeKey: string;
  /** Which of the configured secrets matched; null when the event came from a reconcile run. */
  secretIndex: number | null;
  /** True when an earlier run of this event did not finish (it threw, timed out or its process died). */
  redelivery: boolean;
  /** 1 on the first run, then one more for each earlier unfinished run. */
  attempt: number;
  /** The store's token for this claim: stores that commit a handler's effect with the done record fence on it. */
  claimToken: string;
  /** `webhook` for a signed delivery, `reconcile` for an event recovered through the API. */
  source: 'webhook' | 'reconcile';
  /** The service's own record, fetched before the handlers ran when a handler asked for it with `{ verify: true }`. */
  record?: TransactionRecord;
}

export interface HandlerOptions {
  /** Fetch the service's record before running (verify for payment.success, retrieve for the rest) and run only if its status agrees with the event. */
  verify?: boolean;
}

export type EventHandler<E extends PaymentEventName = PaymentEventName> = (
  event: PaymentEvent<E>,
  context: HandlerContext,
) => unknown;

export interface EventRouter {
  /** Run `handler` for one event name or several. */
  on<E extends PaymentEventName>(event: E | readonly E[], handler: EventHandler<E>, options?: HandlerOptions): EventRouter;
  /** Run `handler` for every event of section 6, after the handlers registered with `on`. */
  onAny(handler: EventHandler, options?: HandlerOptions): EventRouter;
  /** Remove a handler registered with `on` or `onAny`. */
  off(handler: EventHandler<never>): EventRouter;
  /** Whether any handler would run for this event name. */
  handles(name: string): boolean;
  /** Whether a handler of this event asked for the service's record first. */
  wantsRecord(name: string): boolean;
  /** Run the handlers of `event.event` one after another, in the order they were registered. */
  dispatch(event: PaymentEvent, context: HandlerContext): Promise<void>;
}

/**
 * A typed event router, usable without any HTTP: the receiver uses one, and so can a queue
 * consumer or a test.
 *
 * @example
 * const router = createEventRouter()
 *   .on('payment.success', (event) => orders.markPaid(event.merchantReference))
 *   .on(['payment.refunded', 'payment.reversed'], (event) => orders.markReturned(event.merchantReference));
 */
export function createEventRouter(): EventRouter {
  type Entry = { handler: EventHandler; verify: boolean };
  const byName = new Map<string, Entry[]>();
  const any: Entry[] = [];
  const none: Entry[] = [];
  const router: EventRouter = {
    on(event, handler, options = {}) {
      for (const name of typeof event === 'string' ? [event] : event) {
        const list = byName.get(name) ?? [];
        list.push({ handler: handler as EventHandler, verify: options.verify === true });
        byName.set(name, list);
      }
      return router;
    },
    onAny(handler, options = {}) {
      any.push({ handler, verify: options.verify === true });
      return router;
    },
    off(handler) {
      for (const list of [...byName.values(), any]) {
        const i = list.findIndex((e) => e.handler === handler);
        if (i >= 0) list.splice(i, 1);
      }
      return router;
    },
    handles(name) {
      return (byName.get(name) ?? none).length > 0 || any.length > 0;
    },
    wantsRecord(name) {
      return (byName.get(name) ?? none).some((e) => e.verify) || any.some((e) => e.verify);
    },
    async dispatch(event, context) {
      await run(event, context);
    },
  };
  /** The handlers one after another; no promise at all while each answers synchronously. */
  const run = (event: PaymentEvent, context: HandlerContext, from = 0): Awaitable<void> => {
    const named = byName.get(event.event) ?? none;
    const count = named.length + any.length;
    for (let i = from; i < count; i++) {
      const result = (i < named.length ? named[i]! : any[i - named.length]!).handler(event, context);
      if (!isPromise(result)) continue;
      // The last handler's own promise is the answer: no extra turn of the microtask queue.
      const settled = Promise.resolve(result) as Promise<unknown>;
      return i === count - 1 ? (settled as Promise<void>) : settled.then(() => run(event, context, i + 1));
    }
  };
  runners.set(router, run);
  return router;
}

const runners = new WeakMap<EventRouter, (event: PaymentEvent, context: HandlerContext) => Awaitable<void>>();

/** `router.dispatch` without a promise when every handler finished synchronously: the receiver's hot path. */
export const runHandlers = (router: EventRouter, event: PaymentEvent, context: HandlerContext): Awaitable<void> =>
  runners.get(router)!(event, context);
