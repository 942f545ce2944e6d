import type { PaymentEvent, PaymentEventName } from './event-schema.js';

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
}

export type EventHandler<E extends PaymentEventName = PaymentEventName> = (
  event: PaymentEvent<E>,
  context: HandlerContext,
) => unknown;

export interface EventRouter {
  /** Run `handler` for one event name or several. */
  on<E extends PaymentEventName>(event: E | readonly E[], handler: EventHandler<E>): EventRouter;
  /** Run `handler` for every event of section 6, after the handlers registered with `on`. */
  onAny(handler: EventHandler): EventRouter;
  /** Remove a handler registered with `on` or `onAny`. */
  off(handler: EventHandler<never>): EventRouter;
  /** Whether any handler would run for this event name. */
  handles(name: string): boolean;
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
  const byName = new Map<string, EventHandler[]>();
  const any: EventHandler[] = [];
  const router: EventRouter = {
    on(event, handler) {
      for (const name of typeof event === 'string' ? [event] : event) {
        const list = byName.get(name) ?? [];
        list.push(handler as EventHandler);
        byName.set(name, list);
      }
      return router;
    },
    onAny(handler) {
      any.push(handler);
      return router;
    },
    off(handler) {
      for (const list of [...byName.values(), any]) {
        const i = list.indexOf(handler as EventHandler);
        if (i >= 0) list.splice(i, 1);
      }
      return router;
    },
    handles(name) {
      return (byName.get(name)?.length ?? 0) > 0 || any.length > 0;
    },
    async dispatch(event, context) {
      for (const handler of byName.get(event.event) ?? []) await handler(event, context);
      for (const handler of any) await handler(event, context);
    },
  };
  return router;
}
