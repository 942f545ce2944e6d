import type { HandlerContext, HandlerOptions, EventHandler, Plan } from '../contracts/handling.js';
import type { PaymentEvent, PaymentEventName } from '../protocol/event-schema.js';
import type { LoopWatch } from '../contracts/handling.js';
import { isPaymentEventName } from '../protocol/payment-lifecycle.js';
import { isPromise, type Awaitable } from '../base/maybe-async.js';

/** Handlers by event name, as `createEventRouter` makes them: dispatched without any HTTP. */
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
  return createRouter().router;
}

/**
 * The router and, for the receiver's hot path, the plan of each name (made once per name and
 * kept until the handlers change) and `run`, which calls a plan's handlers without a promise
 * while each answers synchronously.
 */
export function createRouter(watch?: LoopWatch) {
  type Entry = { handler: EventHandler; verify: boolean };
  const byName = new Map<string, Entry[]>();
  const any: Entry[] = [];
  const plans = new Map<string, Plan>();
  const planFor = (name: string): Plan => {
    let plan = plans.get(name);
    if (!plan) {
      const entries = [...(byName.get(name) ?? []), ...any];
      plan = { handlers: entries.map((e) => e.handler), wantsRecord: entries.some((e) => e.verify) };
      // Only names that can have handlers are kept: an arbitrary string passed to handles() must not grow the map.
      if (byName.has(name) || isPaymentEventName(name)) plans.set(name, plan);
    }
    return plan;
  };
  const router: EventRouter = {
    on(event, handler, options = {}) {
      for (const name of typeof event === 'string' ? [event] : event) {
        const list = byName.get(name) ?? [];
        list.push({ handler: handler as EventHandler, verify: options.verify === true });
        byName.set(name, list);
      }
      plans.clear();
      return router;
    },
    onAny(handler, options = {}) {
      any.push({ handler, verify: options.verify === true });
      plans.clear();
      return router;
    },
    off(handler) {
      for (const list of [...byName.values(), any]) {
        const i = list.findIndex((e) => e.handler === handler);
        if (i >= 0) list.splice(i, 1);
      }
      plans.clear();
      return router;
    },
    handles: (name) => planFor(name).handlers.length > 0,
    wantsRecord: (name) => planFor(name).wantsRecord,
    async dispatch(event, context) {
      await run(planFor(event.event).handlers, event, context);
    },
  };
  /** The handlers one after another; no promise at all while each answers synchronously. */
  const run = (handlers: readonly EventHandler[], event: PaymentEvent, context: HandlerContext, from = 0): Awaitable<void> => {
    for (let i = from; i < handlers.length; i++) {
      const handler = handlers[i]!;
      let result: unknown;
      if (watch) {
        const startedAt = watch.now();
        // Timed also when it throws: a handler may block the loop and then fail.
        try {
          result = handler(event, context);
        } finally {
          watch.ran(handler, event.event, i, startedAt);
        }
      } else result = handler(event, context);
      if (!isPromise(result)) continue;
      // The last handler's own promise is the answer: no extra turn of the microtask queue.
      const settled = Promise.resolve(result) as Promise<unknown>;
      return i === handlers.length - 1 ? (settled as Promise<void>) : settled.then(() => run(handlers, event, context, i + 1));
    }
  };
  return { router, planFor, run };
}
