import type { EventHandler, HandlerContext, PaymentEvent, PaymentEventName } from '@payhook/core';

/** One run of a tracked handler. */
export interface HandlerRun {
  /** `ctx.reference`: the transaction's reference. */
  reference: string;
  /** The event's name (`payment.success`, …). */
  event: string;
  /** `ctx.dedupeKey`. */
  dedupeKey: string;
  /** `ctx.attempt`: 1 on the first run, more after earlier runs threw or died. */
  attempt: number;
  /** `ctx.redelivery`: an earlier run of the event did not finish. */
  redelivery: boolean;
  /** `ctx.source`: `webhook`, `reconcile` or `replay`. */
  source: HandlerContext['source'];
  /** `running` until the handler settles; `ok` when it returned; `threw` when it threw (including NonRetriableError). */
  result: 'running' | 'ok' | 'threw';
  /** What it threw, when it threw. */
  error?: unknown;
}

/** What `recordRuns` gives: `track` wraps handlers, the rest read their runs. */
export interface HandlerRuns {
  /**
   * Wrap a handler so each of its runs is recorded, then register the wrapper with `on` or
   * `onAny`. Without a handler, the wrapper only records (e.g. `receiver.onAny(runs.track())`,
   * which runs after the `on` handlers of the event, so it records that they all returned).
   */
  track<E extends PaymentEventName = PaymentEventName>(handler?: EventHandler<E>): EventHandler<E>;
  /** Every run so far, in the order they started. */
  readonly list: readonly HandlerRun[];
  /** The runs of one reference (and event), in the order they started. */
  of(reference: string, event?: string): HandlerRun[];
  /** How many runs of `reference` (and `event`) returned without throwing. */
  completed(reference: string, event?: string): number;
  /** Resolves once no tracked run is still going (handlers that went on after a 202). */
  settled(): Promise<void>;
  /** Forget every run so far. */
  clear(): void;
}

/**
 * A record of handler runs, for asserting what really ran (the matchers accept it): wrap the
 * handlers your receiver registers with `runs.track(handler)`.
 *
 * @example
 * const runs = recordRuns();
 * const receiver = createReceiver({ secret }).on('payment.success', runs.track(fulfil));
 * await deliver(receiver.handle, event, { secret, duplicates: 5 });
 * expect(runs).toHaveProcessedExactlyOnce(event.reference, 'payment.success');
 */
export function recordRuns(): HandlerRuns {
  const list: HandlerRun[] = [];
  const running = new Set<Promise<unknown>>();
  const matches = (run: HandlerRun, reference: string, event?: string) =>
    run.reference === reference && (event === undefined || run.event === event);
  return {
    track<E extends PaymentEventName>(handler?: EventHandler<E>): EventHandler<E> {
      return async (event: PaymentEvent<E>, ctx: HandlerContext) => {
        const run: HandlerRun = {
          reference: event.reference,
          event: event.event,
          dedupeKey: ctx.dedupeKey,
          attempt: ctx.attempt,
          redelivery: ctx.redelivery,
          source: ctx.source,
          result: 'running',
        };
        list.push(run);
        const work = (async () => handler?.(event, ctx))();
        running.add(work);
        try {
          const value = await work;
          run.result = 'ok';
          return value;
        } catch (error) {
          run.result = 'threw';
          run.error = error;
          throw error;
        } finally {
          running.delete(work);
        }
      };
    },
    get list() {
      return list;
    },
    of: (reference, event) => list.filter((r) => matches(r, reference, event)),
    completed: (reference, event) => list.filter((r) => matches(r, reference, event) && r.result === 'ok').length,
    async settled() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    clear() {
      list.length = 0;
    },
  };
}

/** Whether a value is a `HandlerRuns` record (for the matchers). */
export function isHandlerRuns(value: unknown): value is HandlerRuns {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as HandlerRuns).track === 'function' &&
    Array.isArray((value as HandlerRuns).list)
  );
}
